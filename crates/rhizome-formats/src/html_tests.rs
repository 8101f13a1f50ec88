use super::*;

#[test]
fn strips_tags_and_decodes() {
    let html = "<html><head><title>T</title><style>p{}</style></head><body>\
        <h1 class=\"x\">Chapter <b>One</b></h1><p>A &amp; B&nbsp;&#233;&#x1EA1;</p>\
        <!-- note --><SCRIPT>var a = '<p>';</Script><p>C<br/>D</p><p>1 < 2 <3</p></body></html>";
    let page = html_to_text(html);
    assert_eq!(page.text, "Chapter One\n\nA & B é\u{1ea1}\n\nC\nD\n\n1 < 2 <3");
    assert_eq!(page.heading.as_deref(), Some("Chapter One"));
    assert_eq!(page.title.as_deref(), Some("T"));
}

#[test]
fn title_paragraphs_and_table_rows() {
    let html = "<!DOCTYPE html><html><head><title>Bohr &amp;\n Sons</title><style>p{}</style>\
        <script>var x = '<p>';</script></head><body><h1>Aage&nbsp;Bohr</h1><!-- note -->\
        <p>Won the <b>Nobel</b>   Prize&#44;\n1975 &#x2014; physics.<br>Line two &lt;3</p>\
        <table><tr><th>Year</th> <th>Prize</th></tr>\n<tr><td>1975</td>\n<td>physics</td></tr></table>\
        <p>x &unknown; y & z</p></body></html>";
    let page = html_to_text(html);
    assert_eq!(page.title.as_deref(), Some("Bohr & Sons"));
    assert_eq!(
        page.text,
        "Aage Bohr\n\nWon the Nobel Prize, 1975 — physics.\nLine two <3\n\nYear | Prize\n1975 | physics\n\nx &unknown; y & z"
    );
    let icons = "<table><tr><td><img src=up.png></td><th>Up</th><td> </td><th>Home</th><td></td></tr></table>";
    assert_eq!(html_to_text(icons).text, "Up | Home");
    assert_eq!(html_to_text("a < b and c").text, "a < b and c");
    assert_eq!(html_to_text("<p>no title</p>").title, None);
}

#[test]
fn lists_divs_and_mail_line_breaks() {
    let html = "<div>Hi Ann,</div><div><br></div><div>The report is\n attached.</div>\
        <ul>\n <li>one</li>\n <li>two</li>\n</ul><div>Bye<br><br>Bo</div>";
    assert_eq!(html_to_text(html).text, "Hi Ann,\n\nThe report is attached.\none\ntwo\nBye\n\nBo");
}

#[test]
fn pre_keeps_its_lines() {
    let html = "<p>Run:</p><pre>cargo build\n  --release\n\ncargo test</pre><p>then\nsee.</p>";
    assert_eq!(html_to_text(html).text, "Run:\n\ncargo build\n--release\n\ncargo test\n\nthen see.");
}

#[test]
fn xhtml_names_cdata_and_skipped_elements() {
    let html = "<?xml version=\"1.0\"?><html:html><html:body><html:h2>Two</html:h2><html:p>a</html:p>\
        <p><![CDATA[x < y & z]]></p><svg><text>drawn</text></svg><math><mi>x</mi></math>\
        <noscript>enable js</noscript><iframe src=\"x\">frame</iframe><p>end</p></html:body></html:html>";
    let page = html_to_text(html);
    assert_eq!(page.text, "Two\n\na\n\nx < y & z\n\nend");
    assert_eq!(page.heading.as_deref(), Some("Two"));
}

#[test]
fn quoted_attributes_and_stray_quotes() {
    // A `>` inside a quoted value does not end the tag.
    assert_eq!(html_to_text("<a title=\"a > b\" href='x'>link</a> text").text, "link text");
    // A quote not after `=` opens nothing; an unclosed one costs a bounded look-ahead.
    assert_eq!(html_to_text("<p class=x\"y>one</p>").text, "one");
    let stray = format!("<a href=\"x>{}</a><p>kept</p>", "word ".repeat(2000));
    assert!(html_to_text(&stray).text.ends_with("kept"));
}

#[test]
fn hostile_input_stays_linear_and_total() {
    // Many tags whose quotes never close, `<` without `>`, unclosed skipped elements.
    let many = "<a x=\">".repeat(50_000);
    assert!(html_to_text(&many).text.is_empty());
    let open = "<b".repeat(100_000);
    assert_eq!(html_to_text(&open).text, open);
    assert_eq!(html_to_text("<p>a</p><script>never closed <p>b</p>").text, "a");
    assert_eq!(html_to_text("<!-- never closed <p>x</p>").text, "");
    assert_eq!(html_to_text("x<![CDATA[unclosed").text, "xunclosed");
    assert_eq!(html_to_text("<title>t").title.as_deref(), Some("t"));
    for s in ["<", "</", "<!", "<?", "<a", "<a=\"", "&", "&#", "&#x;", "<td>", "</pre>", "<pre>"] {
        let _ = html_to_text(s);
    }
}

#[test]
fn references() {
    assert_eq!(decode_entities("&#0; &#99999999; &#65; &#xD800;"), "&#0; &#99999999; A &#xD800;");
    assert_eq!(decode_entities("co&shy;op &amp;amp; &euro;5 &cent;"), "coop &amp; €5 ¢");
    assert_eq!(entity("sect").as_deref(), Some("\u{a7}"));
}
