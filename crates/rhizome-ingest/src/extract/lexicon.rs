//! Small word lists the heuristics use (lowercase). No gazetteer beyond a few dozen
//! country and continent names.

use std::collections::HashSet;
use std::sync::LazyLock;

type Set = LazyLock<HashSet<&'static str>>;

macro_rules! set {
    ($($w:expr),* $(,)?) => { LazyLock::new(|| [$($w),*].into_iter().collect()) };
}

/// Capitalised words that do not start a name: sentence starters, pronouns, determiners,
/// prepositions, conjunctions and common adverbs (English and Vietnamese).
pub static STARTERS: Set = set![
    "the", "a", "an", "in", "on", "at", "it", "its", "this", "that", "these", "those", "he", "she",
    "they", "we", "you", "i", "his", "her", "their", "our", "my", "your", "there", "here", "after",
    "before", "during", "however", "although", "though", "while", "when", "where", "why", "how",
    "what", "which", "who", "whom", "whose", "as", "since", "because", "if", "unless", "until",
    "also", "then", "thus", "hence", "therefore", "moreover", "furthermore", "meanwhile", "later",
    "today", "yesterday", "tomorrow", "both", "each", "every", "all", "some", "many", "most",
    "several", "few", "other", "another", "such", "one", "two", "three", "first", "second",
    "third", "last", "neither", "either", "not", "no", "yes", "but", "and", "or", "so", "yet",
    "for", "from", "to", "by", "with", "without", "within", "among", "between", "under", "over",
    "through", "throughout", "despite", "upon", "into", "onto", "according", "following", "born",
    "based", "located", "known", "instead", "originally", "currently", "formerly", "together",
    "unlike", "like", "besides", "along", "around", "about", "above", "below", "against",
    "towards", "toward", "via", "per", "once", "now", "still", "even", "only", "just", "early",
    "recently", "eventually", "finally", "initially", "subsequently", "additionally", "do",
    "does", "did", "is", "are", "was", "were", "be", "has", "have", "had", "can", "could", "will",
    "would", "should", "may", "might", "must", "let", "please", "note", "see", "although", "whilst",
    "năm", "ông", "bà", "trong", "sau", "trước", "khi", "tại", "vào", "theo", "các", "những",
    "một", "người", "đây", "đó", "cả", "anh", "chị", "họ", "nó", "ngày", "tháng", "tuy", "nhưng",
    "và", "với", "là", "có", "nhiều", "hai", "ba", "four", "five", "six", "seven", "eight",
    "nine", "ten", "eleven", "twelve", "twenty", "hundreds", "thousands", "millions",
];

/// Common Vietnamese words that open sentences (adverbs, pronouns, conjunctions, verbs,
/// nouns of time and quantity): capitalised there, a name on their own never.
pub static VI_COMMON: Set = set![
    "giải", "sau", "trước", "theo", "tuy", "nhưng", "vì", "do", "nếu", "khi", "đây", "đó",
    "này", "các", "những", "một", "hai", "ba", "bốn", "năm", "người", "việc", "cuộc", "sự",
    "ngày", "tháng", "hôm", "lúc", "từ", "đến", "tới", "cho", "bởi", "với", "về", "để", "vào",
    "ra", "lên", "hiện", "ngoài", "bên", "dưới", "trên", "giữa", "cùng", "tất", "mọi", "mỗi",
    "nhiều", "ít", "chỉ", "còn", "đã", "sẽ", "đang", "vẫn", "cũng", "rất", "hơn", "không",
    "chưa", "có", "là", "được", "bị", "phải", "nên", "cần", "muốn", "thì", "mà", "hay",
    "hoặc", "và", "song", "dù", "mặc", "ông", "bà", "anh", "chị", "em", "họ", "chúng", "tôi",
    "ta", "mình", "nó", "ai", "gì", "sao", "thế", "vậy", "như", "bao", "đâu", "nào", "thực",
    "thật", "cả", "tại", "ngay", "suốt", "qua", "đầu", "cuối", "thời", "trong", "vừa",
    "mới", "nay", "tiếp", "riêng", "chính", "bản", "nhờ", "trở", "làm", "đoạt",
    "nhận", "sinh", "mất", "học", "kết", "thành", "trao", "đề", "phát", "tham", "chế", "chơi",
    "nằm", "thuộc", "sáng", "cấu", "nguyên", "hạt", "bom", "mô", "đội", "nhà", "con", "cha",
    "mẹ", "vợ", "chồng", "bạn", "công", "tác", "nghiên", "cứu", "tổ", "chức", "hệ", "quá",
    "ngược", "dựa", "nhìn", "xét", "hầu", "đặc", "điều", "vấn", "ý", "số", "lần",
];

/// First syllables of Vietnamese names of prizes and institutions, which may take a
/// lowercase connector inside ("Giải Nguyên tử vì Hòa bình", "Bộ Giáo dục và Đào tạo").
pub static VI_NAME_HEADS: Set = set![
    "giải", "huy", "viện", "bộ", "đại", "trường", "hội", "quỹ", "công", "ngân", "học", "ủy",
    "ban", "sở", "cục", "tổng", "liên", "tập", "nhà", "bảo", "thư",
];

/// Last words of a name that takes a possessive inside ("St Paul's Cathedral").
pub static POSSESSIVE_HEADS: LazyLock<HashSet<&'static str>> = LazyLock::new(|| {
    let extra = ["cathedral", "chapel", "abbey", "parish", "witnesses", "day", "prize", "cup",
        "studies", "hospital", "college", "church", "island", "bay", "point", "inn", "restaurant"];
    ORG_WORDS.iter().chain(LOC_WORDS.iter()).copied().chain(extra).collect()
});

/// Lowercase words that may join capitalised words inside a name ("van", "de", "of").
pub static PARTICLES: Set = set![
    "de", "van", "von", "der", "den", "du", "des", "la", "le", "da", "di", "del", "della", "dos",
    "das", "bin", "ibn", "al", "el", "ten", "ter", "zu", "y", "upon",
];

/// Honorifics dropped from the front of a name, marking it a person.
pub static HONORIFICS: Set = set![
    "mr", "mrs", "ms", "miss", "dr", "prof", "sir", "dame", "mme", "mlle", "herr", "frau",
    "señor", "senhor",
];

/// Titles dropped from the front of a name when a name follows ("CEO Sam Altman").
pub static ROLE_TITLES: Set = set![
    "ceo", "cto", "cfo", "coo", "president", "king", "queen", "prince", "princess", "senator",
    "governor", "general", "pope", "emperor", "chairman", "director", "professor", "captain",
    "judge", "bishop", "chancellor", "minister", "premier", "mayor", "lieutenant", "colonel",
    "sergeant", "admiral", "coach", "founder", "editor", "author", "saint",
];

/// Abbreviations that may be followed by `.` inside a name ("St. Louis", "Jr.").
pub static ABBREVIATIONS: Set = set![
    "st", "mt", "ft", "jr", "sr", "dr", "mr", "mrs", "ms", "prof", "gen", "col", "lt", "sgt",
    "capt", "rev", "hon", "gov", "sen", "rep", "inc", "co", "corp", "ltd", "no", "vol", "bros",
];

/// Words making a name an organisation.
pub static ORG_WORDS: Set = set![
    "inc", "corp", "corporation", "company", "co", "ltd", "llc", "plc", "gmbh", "ag", "university",
    "college", "institute", "institution", "agency", "journal", "association", "society",
    "foundation", "council", "committee", "commission", "department", "ministry", "bank", "group",
    "party", "club", "school", "academy", "museum", "laboratory", "laboratories", "labs", "press",
    "records", "studios", "airlines", "airways", "army", "navy", "league", "union", "federation",
    "organization", "organisation", "hospital", "church", "network", "fc", "board", "office",
    "bureau", "senate", "congress", "parliament", "government", "corps", "industries",
    "technologies", "systems", "holdings", "enterprises", "partners", "publishing", "publishers",
    "magazine", "newspaper", "times", "gazette", "railroad", "railway", "motors", "brewery", "tribune", "team", "orchestra", "band", "choir",
    "centre", "center", "library", "conservatory", "seminary", "polytechnic", "trust", "fund",
    "viện", "trường", "hội", "đảng", "quỹ", "bộ",
];

/// Vietnamese two-syllable heads written with a lowercase second syllable inside names,
/// as (first, second): "Đại học Copenhagen", "Huy chương Rutherford", "Vật lý".
pub const VI_COMPOUNDS: &[(&str, &str)] = &[
        ("đại", "học"), ("huy", "chương"), ("dự", "án"), ("công", "ty"), ("ngân", "hàng"),
        ("thành", "phố"), ("bệnh", "viện"), ("tập", "đoàn"), ("học", "viện"), ("vật", "lý"),
        ("hóa", "học"), ("hoá", "học"), ("y", "học"), ("văn", "học"), ("hòa", "bình"),
        ("kinh", "tế"), ("toán", "học"), ("sinh", "học"), ("nguyên", "tử"), ("quốc", "gia"),
        ("trường", "đại"), ("ủy", "ban"), ("chính", "phủ"), ("quốc", "hội"), ("giáo", "dục"),
        ("đào", "tạo"), ("khoa", "học"), ("công", "nghệ"), ("y", "tế"), ("ngoại", "giao"),
        ("quốc", "phòng"), ("văn", "hóa"), ("văn", "hoá"), ("thể", "thao"), ("du", "lịch"),
        ("nông", "nghiệp"), ("tài", "chính"), ("xã", "hội"), ("nhân", "dân"), ("bảo", "tàng"),
        ("thư", "viện"),
];

/// Vietnamese organisation heads (first two syllables, lowercase).
pub static VI_ORG_HEADS: Set = set!["đại học", "công ty", "ngân hàng", "tập đoàn", "học viện", "bệnh viện", "ủy ban", "chính phủ", "quốc hội"];
/// Vietnamese place heads.
pub static VI_LOC_HEADS: Set = set!["thành phố", "tỉnh", "sông", "hồ", "núi", "quận", "huyện", "xã", "biển", "vịnh", "đảo"];

/// Words making a name a place.
pub static LOC_WORDS: Set = set![
    "city", "river", "county", "province", "island", "islands", "lake", "mountain", "mountains",
    "mount", "mt", "valley", "bay", "sea", "ocean", "street", "road", "avenue", "district",
    "region", "village", "town", "peninsula", "desert", "coast", "beach", "falls", "canyon",
    "square", "gulf", "strait", "creek", "harbor", "harbour", "highlands", "plains", "forest",
    "prefecture", "township", "borough", "parish", "territory", "oblast", "kingdom", "republic",
    "state", "states", "airport", "station", "park", "bridge", "castle", "palace", "pond",
    "brook", "stream", "springs", "hill", "hills", "heights", "cape", "glacier", "reservoir",
    "canal", "trail", "ridge", "peak", "marsh", "lagoon", "bayou", "fjord", "wall", "volcano",
];

/// Country, continent and region names (a tiny gazetteer; names of one word, lowercase,
/// or several words joined by spaces).
pub static PLACES: Set = set![
    "africa", "asia", "europe", "america", "north america", "south america", "antarctica",
    "australia", "oceania", "united states", "united kingdom", "england", "scotland", "wales",
    "ireland", "france", "germany", "italy", "spain", "portugal", "netherlands", "belgium",
    "switzerland", "austria", "denmark", "sweden", "norway", "finland", "iceland", "poland",
    "russia", "ukraine", "greece", "turkey", "egypt", "israel", "iran", "iraq", "india",
    "pakistan", "china", "japan", "korea", "south korea", "north korea", "vietnam", "việt nam",
    "thailand", "indonesia", "philippines", "malaysia", "singapore", "canada", "mexico",
    "brazil", "argentina", "chile", "peru", "colombia", "nigeria", "kenya", "new zealand",
    "đan mạch", "hoa kỳ", "mỹ", "pháp", "đức", "nhật bản", "trung quốc", "hà nội",
    "london", "paris", "berlin", "tokyo", "beijing", "new york", "copenhagen", "chicago",
    "los angeles", "san francisco", "rome", "moscow", "washington", "alabama", "alaska",
    "arizona", "arkansas", "california", "colorado", "connecticut", "delaware", "florida",
    "georgia", "hawaii", "idaho", "illinois", "indiana", "iowa", "kansas", "kentucky",
    "louisiana", "maine", "maryland", "massachusetts", "michigan", "minnesota", "mississippi",
    "missouri", "montana", "nebraska", "nevada", "new hampshire", "new jersey", "new mexico",
    "north carolina", "north dakota", "ohio", "oklahoma", "oregon", "pennsylvania",
    "rhode island", "south carolina", "south dakota", "tennessee", "texas", "utah", "vermont",
    "virginia", "west virginia", "wisconsin", "wyoming", "ontario", "quebec", "bavaria",
    "scandinavia", "siberia", "cuba", "jamaica", "haiti", "bulgaria", "romania", "hungary",
    "czechoslovakia", "czech republic", "slovakia", "serbia", "croatia", "yugoslavia",
    "east germany", "west germany", "soviet union", "mongolia", "taiwan", "hong kong",
    "bangladesh", "sri lanka", "nepal", "afghanistan", "saudi arabia", "syria", "lebanon",
    "jordan", "ethiopia", "ghana", "south africa", "morocco", "algeria", "tunisia", "libya",
    "venezuela", "bolivia", "ecuador", "uruguay", "paraguay", "puerto rico",
];

/// Words that qualify a person name in front of it ("Democratic Senator Laura Kelly").
pub static QUALIFIERS: Set = set![
    "republican", "democratic", "democrat", "independent", "liberal", "conservative",
    "socialist", "labour", "former", "incumbent", "late", "actor", "actress", "singer", "rapper",
    "author", "writer", "poet", "composer", "director",
];

/// Words that keep a capitalised span from being a person name.
pub static NON_PERSON: Set = set![
    "factor", "dice", "game", "games", "award", "awards", "prize", "cup", "war", "act", "series",
    "show", "album", "film", "festival", "championship", "championships", "tournament",
    "olympics", "day", "bowl", "medal", "trophy", "order", "tower", "building", "hall",
    "theatre", "theater", "stadium", "arena", "temple", "nobel", "giải", "huy", "chương", "dự",
    "án", "model", "algorithm", "method", "theory", "effect", "law", "principle", "equation",
    "syndrome", "disease", "language", "therapy", "physics", "chemistry", "mathematics",
    "science", "history", "music", "song", "book", "novel", "review", "post", "news", "radio",
    "tv", "television", "channel", "pictures", "entertainment", "productions", "software",
    "system", "project", "program", "programme", "mission", "operation", "treaty", "agreement",
    "convention", "conference", "summit", "declaration", "constitution", "revolution",
    "empire", "dynasty", "united", "national", "international", "royal", "federal", "american",
    "british", "european", "world", "global", "north", "south", "east", "west", "northern",
    "southern", "eastern", "western", "new", "old", "great", "grand", "christmas", "easter",
    "english", "french", "german", "chinese", "spanish", "japanese", "vật", "lý", "edition",
    "version", "league", "division", "prix", "open", "season", "episode", "chapter", "volume",
    "street", "avenue", "road", "river", "lake", "island", "county", "curtain", "pieces",
    "symphony", "concerto", "sonata", "opera", "suite", "tour", "clause", "article", "section",
    "amendment", "bill", "census", "olympiads", "ep", "lp", "cd", "dvd",
];

/// Lowercase words right before a name that mark it a person ("psychologist Carl Rogers").
pub static PERSON_BEFORE: Set = set![
    "psychologist", "physicist", "chemist", "biologist", "actor", "actress", "singer", "writer",
    "author", "director", "producer", "editor", "president", "founder", "ceo", "chairman",
    "player", "coach", "manager", "politician", "poet", "novelist", "painter", "artist",
    "composer", "musician", "scientist", "mathematician", "philosopher", "professor", "son",
    "daughter", "wife", "husband", "brother", "sister", "father", "mother", "uncle", "aunt",
    "nephew", "niece", "cousin", "grandson", "granddaughter", "senator", "governor", "minister",
    "journalist", "economist", "historian", "architect", "lawyer", "judge", "rapper",
    "guitarist", "drummer", "comedian", "filmmaker", "screenwriter", "dancer", "footballer",
    "boxer", "cricketer", "designer", "engineer", "inventor", "entrepreneur", "businessman",
    "businesswoman", "astronaut", "photographer", "sculptor", "pianist", "violinist",
    "conductor", "mr", "mrs", "ms", "dr", "ông", "bà", "anh", "chị", "nhà",
];

/// Lowercase words right after a name that mark it a person ("X said").
pub static PERSON_AFTER: Set = set!["said", "says", "told", "wrote", "argued", "explained", "who", "himself", "herself", "died"];

/// Lowercase words right before a name that mark it (weakly) a place.
pub static PLACE_BEFORE: Set = set!["in", "at", "near", "tại", "ở"];

/// Months, full and abbreviated.
pub static MONTHS: Set = set![
    "january", "february", "march", "april", "may", "june", "july", "august", "september",
    "october", "november", "december", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep",
    "sept", "oct", "nov", "dec",
];

/// Days of the week.
pub static WEEKDAYS: Set = set!["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"];

/// Number scale words ("10 billion").
pub static SCALES: Set = set![
    "hundred", "thousand", "million", "billion", "trillion", "bn", "mn", "percent", "triệu", "tỷ",
    "nghìn", "ngàn",
];

/// Currency words after a number ("10 dollars").
pub static CURRENCY_WORDS: Set = set![
    "dollar", "dollars", "usd", "eur", "euro", "euros", "pound", "pounds", "gbp", "yen", "yuan",
    "rmb", "renminbi", "đồng", "vnd", "rupee", "rupees", "franc", "francs", "marks", "cents",
];

/// Currency symbols before a number ("$10").
pub const CURRENCY_SYMBOLS: [&str; 8] = ["$", "€", "£", "¥", "₫", "₹", "₩", "₽"];

/// Words after which a span may take a trailing year ("Giải Nobel Vật lý 1975").
pub static EVENT_WORDS: Set = set![
    "nobel", "giải", "prize", "award", "cup", "olympics", "games", "expo", "championship",
    "championships", "festival", "election", "census",
];

/// True if `w` (lowercase) is in `set`, ignoring a trailing `.`.
pub fn has(set: &HashSet<&'static str>, w: &str) -> bool {
    set.contains(w) || w.strip_suffix('.').is_some_and(|x| set.contains(x))
}
