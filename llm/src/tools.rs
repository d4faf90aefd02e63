//! The tools a node may offer the model: their names, JSON schemas, which
//! of them a node gets, and the path rules every implementation shares.
//! Running them is the runner's business (files natively, the vault's
//! directory handle and `fetch` in the browser).

use serde_json::{json, Value};

/// Every tool the runners implement.
pub const TOOLS: &[&str] = &["list_notes", "read_note", "write_note", "fetch_url"];

/// Tools that change something; never offered where the node is review-only.
pub fn is_editing(name: &str) -> bool {
    name == "write_note"
}

/// Split a node's declared tools into what is offered and what no runner has.
/// A node is offered only tools it declares.
pub fn offer(declared: &[String], review_only: bool) -> (Vec<String>, Vec<String>) {
    let mut offered = Vec::new();
    let mut missing = Vec::new();
    for name in declared {
        if !TOOLS.contains(&name.as_str()) {
            missing.push(name.clone());
        } else if offered.contains(name) || (review_only && is_editing(name)) {
            continue;
        } else {
            offered.push(name.clone());
        }
    }
    (offered, missing)
}

/// The OpenAI function schema of a tool.
pub fn schema(name: &str) -> Value {
    let (description, params) = match name {
        "list_notes" => (
            "List the vault's notes (vault-relative paths).",
            json!({"type": "object", "properties": {}}),
        ),
        "read_note" => (
            "Read one note of the vault.",
            json!({"type": "object", "properties": {"path": {"type": "string", "description": "vault-relative path, e.g. ideas/a.md"}}, "required": ["path"]}),
        ),
        "write_note" => (
            "Create or replace a note of the vault (not a plan step's own note).",
            json!({"type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}}, "required": ["path", "content"]}),
        ),
        _ => (
            "Fetch a URL over HTTP(S) and return its text.",
            json!({"type": "object", "properties": {"url": {"type": "string"}}, "required": ["url"]}),
        ),
    };
    json!({"type": "function", "function": {"name": name, "description": description, "parameters": params}})
}

/// The arguments of a call, `Null` when the model wrote no valid JSON.
pub fn arguments(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or(Value::Null)
}

/// A vault-relative `.md` path that cannot leave the vault or enter a
/// dot-folder; backslashes become slashes.
pub fn safe_path(path: Option<&str>) -> Result<String, String> {
    let path = path.ok_or("missing path")?;
    // A NUL or other control character names no note any file system
    // would make: refused here, the model is told, where the file system's
    // own error would stop the run at every resume.
    if path.chars().any(char::is_control) {
        return Err(format!(
            "{path:?} holds a control character: not a vault-relative .md path"
        ));
    }
    let norm = path.replace('\\', "/");
    let clean = !norm.is_empty()
        && !norm.starts_with('/')
        && !norm.contains(':')
        && norm
            .split('/')
            .all(|part| !part.is_empty() && !part.starts_with('.'));
    if !clean || !norm.ends_with(".md") {
        return Err(format!("{path} is not a vault-relative .md path"));
    }
    Ok(norm)
}

/// A name that reads as what it is: none of the characters that reorder
/// text (bidirectional controls, with which `report\u{202e}dm.md` shows
/// as `reportmd.md`) or take no space (`sta\u{200b}rt.md` shows as
/// `start.md`), in a file list, a trace or a commit. Joiners (U+200C,
/// U+200D) stay: Persian words and emoji sequences need them.
pub fn readable_name(path: &str) -> Result<(), String> {
    let misleading = |c: &char| {
        matches!(
            c,
            '\u{00AD}'
                | '\u{061C}'
                | '\u{180E}'
                | '\u{200B}'
                | '\u{200E}'
                | '\u{200F}'
                | '\u{202A}'..='\u{202E}'
                | '\u{2060}'..='\u{2064}'
                | '\u{2066}'..='\u{2069}'
                | '\u{FEFF}'
        )
    };
    match path.chars().find(misleading) {
        Some(c) => Err(format!(
            "{path:?} holds U+{:04X}, an invisible or direction-changing character that makes the name read as another: write the name without it",
            c as u32
        )),
        None => Ok(()),
    }
}

/// Whether a tool may write `path`: never a plan's own note, never the run's
/// trace folder. Where the file system ignores case (`case_insensitive`),
/// names are compared so too: `START.md` is then the note `start.md`.
pub fn writable(path: &str, plan_notes: &[String], case_insensitive: bool) -> Result<(), String> {
    let same = |a: &str, b: &str| {
        if case_insensitive {
            a.to_lowercase() == b.to_lowercase()
        } else {
            a == b
        }
    };
    // A run's trace folder, at the vault's root or in a plan's folder.
    let folded = match case_insensitive {
        true => path.to_lowercase(),
        false => path.to_string(),
    };
    let in_trace = folded.starts_with("00_plan-trace/") || folded.contains("/00_plan-trace/");
    if plan_notes.iter().any(|n| same(n, path)) || in_trace {
        return Err(format!(
            "{path} belongs to the plan or its trace and cannot be written by a tool"
        ));
    }
    Ok(())
}

/// An http(s) URL for `fetch_url`.
pub fn fetchable(url: &str) -> Result<&str, String> {
    if url.starts_with("http://") || url.starts_with("https://") {
        Ok(url)
    } else {
        Err(format!("{url} is not an http(s) URL"))
    }
}

/// `url` as it may be shown: the credentials in its authority
/// (`user:password@`) written `<credentials>`, so a refusal of such a URL
/// does not print the password it refuses.
pub fn shown_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    match rest[..end].rfind('@') {
        Some(at) => format!("{scheme}://<credentials>{}", &rest[at..]),
        None => url.to_string(),
    }
}

/// The host (lower-case; an IPv6 address without its brackets) and port of
/// an http(s) URL. A URL carrying credentials (`user@host`) is refused.
pub fn url_host(url: &str) -> Result<(String, u16), String> {
    let (rest, default_port) = if let Some(rest) = url.strip_prefix("http://") {
        (rest, 80)
    } else if let Some(rest) = url.strip_prefix("https://") {
        (rest, 443)
    } else {
        return Err(format!("{url} is not an http(s) URL"));
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    if authority.contains('@') {
        return Err(format!("{} carries credentials; refused", shown_url(url)));
    }
    let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
        let (host, after) = v6
            .split_once(']')
            .ok_or_else(|| format!("{url} has a malformed host"))?;
        (host, after.strip_prefix(':'))
    } else {
        match authority.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (authority, None),
        }
    };
    let port = match port {
        Some(p) => p
            .parse()
            .map_err(|_| format!("{url} has a malformed port"))?,
        None => default_port,
    };
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    if host.is_empty() {
        return Err(format!("{url} has no host"));
    }
    Ok((host, port))
}

/// Why `fetch_url` may not reach an address: the user's own machine, their
/// network, or a cloud's metadata service. `None` for a public address.
/// An IPv6 address carrying an IPv4 one (mapped, compatible, translated,
/// 6to4, NAT64) is judged by that address, and beyond those only global
/// unicast (`2000::/3`) is public.
pub fn forbidden_ip(ip: std::net::IpAddr) -> Option<&'static str> {
    use std::net::{IpAddr, Ipv4Addr};
    match ip {
        IpAddr::V4(v4) => {
            let [a, b, c, _] = v4.octets();
            if v4.is_loopback() {
                Some("loopback")
            } else if v4.is_private()
                || (a == 100 && (64..128).contains(&b))
                || (a == 198 && b & 0xfe == 18)
            {
                Some("private")
            } else if v4.is_link_local() {
                Some("link-local (cloud metadata)")
            } else if a == 0
                || a >= 224
                || (a == 192 && b == 0 && (c == 0 || c == 2))
                || (a == 198 && b == 51 && c == 100)
                || (a == 203 && b == 0 && c == 113)
            {
                // Unspecified, multicast, reserved (240/4) and broadcast,
                // the IETF's own assignments, and the documentation ranges
                // (TEST-NET-1 to 3), which no public host has (a private
                // network may use them).
                Some("non-routable")
            } else {
                None
            }
        }
        IpAddr::V6(v6) => {
            let seg = v6.segments();
            let v4 = |high: u16, low: u16| {
                let ([a, b], [c, d]) = (high.to_be_bytes(), low.to_be_bytes());
                forbidden_ip(IpAddr::V4(Ipv4Addr::new(a, b, c, d)))
            };
            if v6.is_loopback() {
                Some("loopback")
            } else if v6.is_unspecified() {
                Some("non-routable")
            } else if let Some(inner) = v6.to_ipv4_mapped() {
                forbidden_ip(IpAddr::V4(inner))
            } else if seg[..6] == [0; 6] || seg[..6] == [0, 0, 0, 0, 0xffff, 0] {
                // IPv4-compatible (`::a.b.c.d`) and IPv4-translated.
                v4(seg[6], seg[7])
            } else if seg[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
                // NAT64: the IPv4 address inside.
                v4(seg[6], seg[7])
            } else if seg[0] == 0x2002 {
                // 6to4: the IPv4 address after the prefix.
                v4(seg[1], seg[2])
            } else if seg[0] & 0xfe00 == 0xfc00
                || seg[0] & 0xffc0 == 0xfec0
                || seg[..3] == [0x64, 0xff9b, 1]
            {
                // Unique local, the old site-local, local-use NAT64.
                Some("private")
            } else if seg[0] & 0xffc0 == 0xfe80 {
                Some("link-local (cloud metadata)")
            } else if seg[0] & 0xe000 != 0x2000
                || seg[..2] == [0x2001, 0]
                || seg[..2] == [0x2001, 0xdb8]
                || seg[..3] == [0x2001, 2, 0]
            {
                // Outside global unicast, Teredo (whose IPv4 address is
                // hidden), documentation (`2001:db8::/32`) and benchmarking
                // (`2001:2::/48`).
                Some("non-routable")
            } else {
                None
            }
        }
    }
}

/// What a URL's text alone says about reaching it (all a runner that cannot
/// resolve names, the browser, can check): `Ok(true)` when its host is in
/// the vault's `allow` list, `Ok(false)` when it may be fetched once its
/// name resolves to public addresses only. Refused: `localhost` and its
/// subdomains, an IP literal in a forbidden range, and a host written as a
/// bare number (`http://2130706433/` is 127.0.0.1).
pub fn fetch_policy(url: &str, allow: &[String]) -> Result<bool, String> {
    let (host, port) = url_host(url)?;
    if host_allowed(allow, &host, port) {
        return Ok(true);
    }
    let refuse = |why: &str| {
        Err(format!(
            "{url}: {host} is {why}; fetch_url reaches only public hosts (a vault allows one in .planvault/config.toml: [fetch] allow_hosts)"
        ))
    };
    if host == "localhost" || host.ends_with(".localhost") {
        return refuse("this machine");
    }
    if let Ok(ip) = host.parse::<std::net::IpAddr>() {
        return match forbidden_ip(ip) {
            Some(why) => refuse(&format!("a {why} address")),
            None => Ok(false),
        };
    }
    let numeric = host
        .split('.')
        .all(|part| part.starts_with("0x") || part.chars().all(|c| c.is_ascii_digit()));
    if numeric {
        return refuse("a number, not a name or a dotted address");
    }
    Ok(false)
}

/// Whether `[fetch] allow_hosts` lets `fetch_url` reach `host` at `port`:
/// an entry `host` allows every port of it, `host:port` (`[v6]:port` for
/// an IPv6 address) that port only, so a vault can open one service of a
/// machine without the rest.
pub fn host_allowed(allow: &[String], host: &str, port: u16) -> bool {
    allow.iter().any(|entry| {
        let entry = entry.trim();
        let (name, only) = match entry.strip_prefix('[') {
            Some(v6) => match v6.split_once("]:") {
                Some((name, port)) => (name, port.parse::<u16>().ok()),
                None => (v6.trim_end_matches(']'), None),
            },
            None => match entry.split_once(':') {
                // One colon and digits after it: a port; more colons, IPv6.
                Some((name, port)) if !port.contains(':') => match port.parse::<u16>() {
                    Ok(port) => (name, Some(port)),
                    Err(_) => return false,
                },
                _ => (entry, None),
            },
        };
        name.eq_ignore_ascii_case(host) && only.is_none_or(|only| only == port)
    })
}

/// The most characters of a fetched page handed back to the model.
pub const FETCH_LIMIT_CHARS: usize = 20_000;

/// The most bytes of a page `fetch_url` reads (a page may be endless); its
/// first [`FETCH_LIMIT_CHARS`] characters are in them.
pub const FETCH_LIMIT_BYTES: usize = 1 << 20;

/// A page's text from its first bytes (at most [`FETCH_LIMIT_BYTES`]): a
/// character the cut split, or bytes that are not UTF-8, read as U+FFFD.
pub fn page_text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(&bytes[..bytes.len().min(FETCH_LIMIT_BYTES)]).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_is_shown_without_its_credentials() {
        assert_eq!(
            shown_url("https://u:pw@h:1/p@x?q=@"),
            "https://<credentials>@h:1/p@x?q=@"
        );
        assert_eq!(shown_url("http://h/a@b"), "http://h/a@b");
        assert_eq!(shown_url("not a url"), "not a url");
        let refused = url_host("http://u:hunter22@h/").unwrap_err();
        assert!(!refused.contains("hunter22"), "{refused}");
    }

    #[test]
    fn a_node_is_offered_only_what_it_declares_and_review_only_nodes_nothing_that_edits() {
        let declared = vec![
            "read_note".to_string(),
            "write_note".into(),
            "send_email".into(),
            "read_note".into(),
        ];
        assert_eq!(
            offer(&declared, false),
            (
                vec!["read_note".into(), "write_note".into()],
                vec!["send_email".into()]
            )
        );
        assert_eq!(
            offer(&declared, true),
            (vec!["read_note".into()], vec!["send_email".into()])
        );
        assert_eq!(offer(&[], false), (vec![], vec![]));
        for name in TOOLS {
            assert_eq!(schema(name)["function"]["name"], *name);
        }
    }

    #[test]
    fn paths_cannot_escape_the_vault() {
        for bad in [
            "../x.md",
            "/etc/x.md",
            ".obsidian/x.md",
            "a/../../x.md",
            "a/b.txt",
            "a//b.md",
            "C:/x.md",
            "a\\..\\x.md",
            "",
            "a\0.md",
            "a\n.md",
            "a/\u{7f}b.md",
            "a\u{85}.md",
        ] {
            assert!(safe_path(Some(bad)).is_err(), "{bad}");
        }
        assert!(safe_path(None).is_err());
        assert_eq!(safe_path(Some("a/b.md")).unwrap(), "a/b.md");
        assert_eq!(safe_path(Some("a\\b.md")).unwrap(), "a/b.md");
    }

    #[test]
    fn a_name_that_reads_as_another_is_refused() {
        for bad in [
            "report\u{202e}dm.md",
            "sta\u{200b}rt.md",
            "a/\u{2066}b.md",
            "\u{feff}x.md",
        ] {
            let why = readable_name(bad).unwrap_err();
            assert!(why.contains("U+"), "{why}");
        }
        for good in [
            "start.md",
            "報告/下書き.md",
            "می\u{200c}خواهم.md",
            "👩\u{200d}💻.md",
        ] {
            assert_eq!(readable_name(good), Ok(()), "{good}");
        }
    }

    #[test]
    fn the_plan_and_its_trace_are_not_writable() {
        let notes = vec!["draft.md".to_string()];
        assert!(writable("draft.md", &notes, false).is_err());
        assert!(writable("00_plan-trace/trace.md", &notes, false).is_err());
        assert!(writable("ideas/new.md", &notes, false).is_ok());
        // By this rule a case-sensitive file system holds DRAFT.md beside
        // draft.md (the runner refuses such a twin of any listed note); one
        // that ignores case would overwrite the plan's note.
        assert!(writable("DRAFT.md", &notes, false).is_ok());
        assert!(writable("DRAFT.md", &notes, true).is_err());
        assert!(writable("00_PLAN-TRACE/x.md", &notes, true).is_err());
        assert!(writable("plans/launch/00_plan-trace/x.md", &notes, false).is_err());
        assert!(writable("notes/00_plan-trace.md", &notes, false).is_ok());
        assert!(writable("Ideas/New.md", &notes, true).is_ok());
        assert!(fetchable("file:///etc/passwd").is_err());
        assert!(fetchable("https://example.org").is_ok());
    }

    #[test]
    fn fetch_refuses_this_machine_the_private_network_and_metadata_by_their_text() {
        for bad in [
            "http://127.0.0.1:8080/x",
            "http://localhost/",
            "http://LOCALHOST./",
            "http://api.localhost/",
            "http://[::1]:9/",
            "http://[::ffff:127.0.0.1]/",
            "http://[::ffff:7f00:1]/",
            "http://10.1.2.3/",
            "http://172.16.0.1/",
            "http://192.168.1.1/",
            "http://100.100.100.200/",
            "http://169.254.169.254/latest/meta-data/",
            "http://[fd00:ec2::254]/",
            "http://[fe80::1]/",
            "http://0.0.0.0/",
            "http://[64:ff9b::7f00:1]/",
            // IPv4 inside IPv6 every way (compatible, translated, 6to4,
            // local-use NAT64), the old site-local, Teredo, and IPv4's
            // benchmarking and reserved ranges.
            "http://[::127.0.0.1]/",
            "http://[::ffff:0:7f00:1]/",
            "http://[2002:7f00:1::1]/",
            "http://[2002:a9fe:a9fe::]/",
            "http://[64:ff9b:1::7f00:1]/",
            "http://[fec0::1]/",
            "http://[2001:0:4136:e378::1]/",
            "http://[100::1]/",
            "http://198.18.0.1/",
            "http://192.0.2.2/",
            "http://198.51.100.7/",
            "http://203.0.113.9/",
            "http://[2001:db8::1]/",
            "http://[2001:2::1]/",
            "http://[::ffff:192.0.2.2]/",
            "http://240.0.0.1/",
            "http://255.255.255.255/",
            "http://2130706433/",
            "http://0x7f.1/",
            "http://user@example.org/",
            "ftp://example.org/",
        ] {
            assert!(fetch_policy(bad, &[]).is_err(), "{bad}");
        }
        for good in [
            "https://example.org/a?b#c",
            "http://93.184.215.14/",
            "https://[2606:4700::1111]/",
            "http://[2002:5db8:d70e::1]/",
            "http://[64:ff9b::5db8:d70e]/",
            "http://198.20.0.1/",
            "http://example.org:8080",
        ] {
            assert_eq!(fetch_policy(good, &[]), Ok(false), "{good}");
        }
        let allow = ["127.0.0.1".to_string(), "wiki.local".to_string()];
        assert_eq!(fetch_policy("http://127.0.0.1:5/", &allow), Ok(true));
        // `host:port` opens that port only.
        let one = [
            "127.0.0.1:8080".to_string(),
            "[::1]:8443".to_string(),
            "::2".to_string(),
        ];
        assert_eq!(fetch_policy("http://127.0.0.1:8080/x", &one), Ok(true));
        assert!(fetch_policy("http://127.0.0.1:5432/", &one).is_err());
        assert!(fetch_policy("http://127.0.0.1/", &one).is_err());
        assert_eq!(fetch_policy("https://[::1]:8443/", &one), Ok(true));
        assert!(fetch_policy("https://[::1]/", &one).is_err());
        assert_eq!(fetch_policy("http://[::2]:9/", &one), Ok(true));
        assert!(!host_allowed(&["h:port".into()], "h", 80));
        assert_eq!(fetch_policy("http://WIKI.local/x", &allow), Ok(true));
        assert!(fetch_policy("http://localhost/", &allow).is_err());
        assert_eq!(
            url_host("https://[::1]:8443/x").unwrap(),
            ("::1".to_string(), 8443)
        );
        assert_eq!(
            url_host("http://Example.ORG").unwrap(),
            ("example.org".to_string(), 80)
        );
    }
}
