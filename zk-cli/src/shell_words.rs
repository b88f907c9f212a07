//! Splitting a shell line into words, as sh does for quotes and backslashes (no variables,
//! no globbing): `set /a "two words"` gives three words.

/// The words of `line`, or why it cannot be split (an unclosed quote).
pub fn split(line: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = line.chars();
    while let Some(ch) = chars.next() {
        match ch {
            c if c.is_whitespace() => words.extend(word.take()),
            '\'' => {
                let w = word.get_or_insert_with(String::new);
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => w.push(c),
                        None => return Err("unclosed single quote".into()),
                    }
                }
            }
            '"' => {
                let w = word.get_or_insert_with(String::new);
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(c @ ('"' | '\\')) => w.push(c),
                            Some(c) => {
                                w.push('\\');
                                w.push(c);
                            }
                            None => return Err("unclosed double quote".into()),
                        },
                        Some(c) => w.push(c),
                        None => return Err("unclosed double quote".into()),
                    }
                }
            }
            '\\' => {
                let w = word.get_or_insert_with(String::new);
                if let Some(c) = chars.next() {
                    w.push(c);
                }
            }
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(word);
    Ok(words)
}

#[cfg(test)]
mod tests {
    use super::split;

    #[test]
    fn quotes_and_escapes() {
        assert_eq!(split("  ls  -R /a ").unwrap(), ["ls", "-R", "/a"]);
        assert_eq!(
            split(r#"set /a "two words" 'it''s' a\ b"#).unwrap(),
            ["set", "/a", "two words", "its", "a b"]
        );
        assert_eq!(
            split(r#"set /a "q\"x\n""#).unwrap(),
            ["set", "/a", "q\"x\\n"]
        );
        assert_eq!(split(r#"create /a """#).unwrap(), ["create", "/a", ""]);
        assert!(split("set /a 'open").is_err());
        assert!(split("set /a \"open").is_err());
        assert!(split("").unwrap().is_empty());
    }
}
