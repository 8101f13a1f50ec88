//! Chinese spans: dates (`1955年12月22日`), money units, names found by suffix (`…公司`,
//! `…大学`, `…湾区`, `…省`) or by cue (`位于X`, `来自X`), then names from jieba's tags.
//!
//! Every CJK character is its own token ([`rhizome_core::text::token_spans`]), so token
//! counts below are character counts.

use super::mention::{push, Mention};
use super::tokens::Sent;

/// Characters that end a name when scanning outwards (particles, prepositions, copulas).
const FUNCTION_CHARS: &str = "的了是在和与及向由于对将把被从为等也都就而并或给到以之着过让使说又还但却已很最更跟同";

/// Two-character verbs and common words that a name does not run across.
const STOP_BIGRAMS: [&str; 46] = [
    "宣布", "投资", "收购", "成立", "加入", "领导", "表示", "发布", "合作", "创立", "创办", "建立", "访问", "前往",
    "来自", "位于", "进入", "离开", "担任", "成为", "属于", "拥有", "包括", "支持", "开发", "推出", "获得", "参加",
    "毕业", "就读", "任职", "工作", "设在", "总部", "认为", "指出", "报道", "声称", "计划", "决定", "准备", "开始",
    "继续", "完成", "加大", "领域",
];

/// Leading characters dropped from a name ("该公司", "这家银行").
const DETERMINERS: &str = "该这那此本各每某其一两几多家个所位座些";

/// Organisation suffixes (longest first).
const ORG_SUFFIXES: [&str; 25] = [
    "股份有限公司",
    "有限公司",
    "研究院",
    "研究所",
    "实验室",
    "委员会",
    "基金会",
    "事务所",
    "出版社",
    "俱乐部",
    "联合会",
    "电视台",
    "大酒店",
    "协会",
    "学会",
    "公司",
    "集团",
    "大学",
    "学院",
    "银行",
    "政府",
    "医院",
    "中学",
    "日报",
    "酒店",
];

/// Place suffixes (longest first); single characters only count at a word end.
const LOC_SUFFIXES: [&str; 21] = [
    "特别行政区",
    "自治区",
    "湾区",
    "半岛",
    "海峡",
    "沙漠",
    "平原",
    "盆地",
    "高原",
    "山脉",
    "大厦",
    "省",
    "市",
    "县",
    "区",
    "州",
    "国",
    "镇",
    "村",
    "岛",
    "湖",
];

/// Generic words that look like names by their suffix.
const NOT_NAMES: [&str; 38] = [
    "全国",
    "各国",
    "本国",
    "外国",
    "该国",
    "两国",
    "强国",
    "大国",
    "城市",
    "本市",
    "该市",
    "全市",
    "地区",
    "社区",
    "小区",
    "园区",
    "市区",
    "郊区",
    "全省",
    "本省",
    "各省",
    "各州",
    "全区",
    "山区",
    "景区",
    "城区",
    "辖区",
    "科技公司",
    "上市公司",
    "跨国公司",
    "投资公司",
    "子公司",
    "分公司",
    "母公司",
    "全资子公司",
    "控股公司",
    "有限公司",
    "股份有限公司",
];

/// Cues followed by a place.
const PLACE_CUES: [&str; 9] = ["位于", "坐落于", "坐落在", "设在", "出生于", "生于", "来自", "总部在", "地处"];

const SCALE_CHARS: &str = "十百千万亿";
const CURRENCIES: [&str; 11] =
    ["美元", "人民币", "欧元", "英镑", "日元", "港元", "美金", "韩元", "卢布", "越南盾", "元"];

/// Characters of a CJK run taken by a money amount after a number: scale characters then
/// a currency (`亿美元` -> 3), or `None`.
pub(crate) fn money_suffix(run: &str) -> Option<usize> {
    let scale = run.chars().take_while(|c| SCALE_CHARS.contains(*c)).count();
    let rest: String = run.chars().skip(scale).collect();
    CURRENCIES.iter().find(|c| rest.starts_with(*c)).map(|c| scale + c.chars().count())
}

/// Characters of a CJK run that are number units after a number (`万`, `亿`).
pub(crate) fn number_units(run: &str) -> usize {
    run.chars().take_while(|c| SCALE_CHARS.contains(*c)).count()
}

/// Chinese dates, then cue names, then suffix names, then the names jieba tags
/// ([`super::zh_tags`]).
pub(crate) fn detect(s: &mut Sent, out: &mut Vec<Mention>) {
    dates(s, out);
    cue_names(s, out);
    suffix_names(s, out);
    super::zh_tags::tagged_names(s, out);
}

fn is_func(s: &Sent, i: usize) -> bool {
    s.tok(i).chars().next().is_some_and(|c| FUNCTION_CHARS.contains(c))
}

/// `2023年`, `2023年5月`, `1955年12月22日`, `5月4日` -> DATE.
fn dates(s: &mut Sent, out: &mut Vec<Mention>) {
    let unit = |s: &Sent, i: usize, u: &str| {
        s.free(i) && s.is_digits(i) && s.tok(i).len() <= 4 && s.adjacent(i + 1) && s.tok(i + 1) == u
    };
    let mut i = 0;
    while i < s.len() {
        let mut end = i;
        if unit(s, i, "年") {
            end = i + 2;
            if unit(s, end, "月") && s.adjacent(end) {
                end += 2;
                if unit(s, end, "日") || unit(s, end, "号") {
                    end += 2;
                }
            }
        } else if unit(s, i, "月") && (unit(s, i + 2, "日") || unit(s, i + 2, "号")) {
            end = i + 4;
        }
        if end > i && s.all_free(i, end) {
            push(s, out, i, end, "DATE");
            i = end;
        } else {
            i += 1;
        }
    }
}

/// Index of the first token at or after `from` where a name running right stops.
fn name_end(s: &Sent, from: usize, max: usize) -> usize {
    let mut k = from;
    while k < s.len() && k - from < max && s.is_cjk(k) && s.free(k) && (k == from || s.adjacent(k)) && !is_func(s, k) {
        if k > from && STOP_BIGRAMS.contains(&s.cjk_run(k, 2).as_str()) {
            break;
        }
        k += 1;
    }
    k
}

/// `位于旧金山` -> LOCATION `旧金山` (ORGANIZATION if it ends with an organisation suffix).
fn cue_names(s: &mut Sent, out: &mut Vec<Mention>) {
    let mut i = 0;
    while i < s.len() {
        let cue = if s.is_cjk(i) { PLACE_CUES.iter().find(|c| s.cjk_run(i, 3).starts_with(*c)) } else { None };
        let Some(cue) = cue else {
            i += 1;
            continue;
        };
        let from = i + cue.chars().count();
        let end = if s.adjacent(from) { name_end(s, from, 6) } else { from };
        if end >= from + 2 {
            let name = s.cjk_run(from, end - from);
            let ty = if ORG_SUFFIXES.iter().any(|x| name.ends_with(x)) { "ORGANIZATION" } else { "LOCATION" };
            push(s, out, from, end, ty);
        }
        i = end.max(i + 1);
    }
}

/// `北京大学` -> ORGANIZATION, `旧金山湾区` -> LOCATION.
fn suffix_names(s: &mut Sent, out: &mut Vec<Mention>) {
    let mut p = 0;
    while p < s.len() {
        if !(s.free(p) && s.is_cjk(p)) {
            p += 1;
            continue;
        }
        let run = s.cjk_run(p, 6);
        let org = ORG_SUFFIXES.iter().find(|x| run.starts_with(*x)).map(|x| (*x, "ORGANIZATION"));
        let found = org.or_else(|| LOC_SUFFIXES.iter().find(|x| run.starts_with(*x)).map(|x| (*x, "LOCATION")));
        let Some((suffix, ty)) = found else {
            p += 1;
            continue;
        };
        let len = suffix.chars().count();
        let end = p + len;
        let at_word_end = end >= s.len() || !s.is_cjk(end) || !s.adjacent(end) || is_func(s, end);
        if len == 1 && !at_word_end {
            p += 1;
            continue;
        }
        let max_prefix = if ty == "ORGANIZATION" { 6 } else { 4 };
        let mut a = p;
        while a > 0
            && p - a < max_prefix
            && s.adjacent(a)
            && s.is_cjk(a - 1)
            && s.free(a - 1)
            && !is_func(s, a - 1)
            && !(a >= 2 && STOP_BIGRAMS.contains(&s.cjk_run(a - 2, 2).as_str()))
        {
            a -= 1;
        }
        while a < p && s.tok(a).chars().next().is_some_and(|c| DETERMINERS.contains(c)) {
            a += 1;
        }
        let name = s.cjk_run(a, end - a);
        let min_prefix = if ty == "ORGANIZATION" { 2 } else { 1 };
        if p - a >= min_prefix && !NOT_NAMES.contains(&name.as_str()) {
            push(s, out, a, end, ty);
            p = end;
        } else {
            p += 1;
        }
    }
}
