//! "Did you mean" suggestions for misspelled names.

/// The known name closest to `name`: equal ignoring case, or within a small edit distance.
pub fn did_you_mean<'a>(name: &str, known: &[&'a str]) -> Option<&'a str> {
    let lower = name.to_lowercase();
    if let Some(k) = known.iter().find(|k| k.to_lowercase() == lower) {
        return Some(k);
    }
    let limit = (name.chars().count() / 3).clamp(1, 3);
    let close = known
        .iter()
        .map(|k| (levenshtein(&lower, &k.to_lowercase()), *k))
        .filter(|(d, _)| *d <= limit)
        .min()
        .map(|(_, k)| k);
    // Otherwise a name that extends or abbreviates a known one (`padding`, `pad`).
    close.or_else(|| {
        known
            .iter()
            .filter(|k| {
                let k = k.to_lowercase();
                k.len().min(lower.len()) >= 3 && (k.starts_with(&lower) || lower.starts_with(&k))
            })
            .min()
            .copied()
    })
}

/// Edit distance (insertions, deletions, substitutions) between two strings.
pub fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_case_and_typo_matches() {
        let known = ["Relu", "Gemm", "Softmax", "linear"];
        assert_eq!(did_you_mean("ReLU", &known), Some("Relu"));
        assert_eq!(did_you_mean("Linear", &known), Some("linear"));
        assert_eq!(did_you_mean("Softmx", &known), Some("Softmax"));
        assert_eq!(did_you_mean("Conv", &known), None);
        assert_eq!(did_you_mean("padding", &["pad", "stride"]), Some("pad"));
    }
}
