//! E-mail messages (`.eml`, RFC 5322 / MIME): the headers a reader wants, the body as
//! text, and the attachments as files of their own.

use mail_parser::{MessageParser, MimeHeaders};

use crate::{html, text, Attachment, Extracted, Limits, ReadError, Result};

/// Reads an e-mail message: `Subject:`, `From:` and `Date:` lines, a blank line, then the
/// text/plain body (or the HTML body as text when there is no plain one). Attachments with
/// a file name go to [`Extracted::attachments`], decoded.
pub fn read_eml(bytes: &[u8], limits: &Limits) -> Result<Extracted> {
    let message = MessageParser::default()
        .parse(bytes)
        .filter(|m| m.headers().iter().next().is_some())
        .ok_or_else(|| ReadError::damaged("no mail headers: not an e-mail message"))?;
    let subject = message.subject().map(|s| text::tidy(s).replace('\n', " "));
    let from = message.from().and_then(|a| a.first()).map(|a| {
        match (a.name.as_deref().filter(|n| !n.trim().is_empty()), a.address.as_deref()) {
            (Some(n), Some(addr)) => format!("{n} <{addr}>"),
            (Some(n), None) => n.to_string(),
            (None, Some(addr)) => addr.to_string(),
            (None, None) => String::new(),
        }
    });
    let from = from.filter(|f| !f.is_empty()).map(|f| text::tidy(&f));
    let mut head = String::new();
    if let Some(s) = &subject {
        head.push_str(&format!("Subject: {s}\n"));
    }
    if let Some(f) = &from {
        head.push_str(&format!("From: {f}\n"));
    }
    if let Some(d) = message.date() {
        head.push_str(&format!("Date: {}\n", d.to_rfc822()));
    }
    let plain: Vec<String> = message
        .text_bodies()
        .filter(|p| p.is_text() && !p.is_text_html())
        .filter_map(|p| p.text_contents().map(str::to_string))
        .collect();
    let bodies = if plain.iter().any(|b| !b.trim().is_empty()) {
        plain
    } else {
        message.html_bodies().filter_map(|p| p.text_contents().map(|h| html::html_to_text(h).text)).collect()
    };
    let body = text::tidy(&bodies.join("\n\n"));
    let mut full = head;
    if !body.is_empty() {
        full.push('\n');
        full.push_str(&body);
    }
    let full = text::tidy(&full);
    text::check_len(&full, limits)?;
    let mut attachments = Vec::new();
    let mut total = 0u64;
    for part in message.attachments() {
        let Some(name) = part.attachment_name().map(str::trim).filter(|n| !n.is_empty()) else {
            continue;
        };
        let bytes = part.contents().to_vec();
        total = total.saturating_add(bytes.len() as u64);
        if total > limits.max_decompressed {
            return Err(ReadError::TooLarge(format!("attachments past the {}-byte limit", limits.max_decompressed)));
        }
        attachments.push(Attachment { name: name.to_string(), bytes });
    }
    let created = message.date().map(|d| d.to_rfc3339()).and_then(|d| text::iso_date(&d));
    Ok(Extracted { title: subject, author: from, created, text: full, attachments, ..Default::default() })
}
