//! How long to wait before retrying a model call.

/// No wait between attempts is ever longer than this.
pub const MAX_BACKOFF_MS: u64 = 30_000;

/// The wait before attempt `attempt + 1`, after `attempt` (1-based) failed:
/// the server's `Retry-After` when it sent one, else `base_ms` doubled per
/// attempt; capped at 30 s either way.
pub fn backoff_ms(base_ms: u64, attempt: u32, retry_after_secs: Option<u64>) -> u64 {
    let wait = match retry_after_secs {
        Some(secs) => secs.saturating_mul(1000),
        None => base_ms.saturating_mul(1u64 << attempt.saturating_sub(1).min(32)),
    };
    wait.min(MAX_BACKOFF_MS)
}

/// `Retry-After` in delta-seconds (an HTTP date is ignored: the doubling
/// backoff applies then).
pub fn parse_retry_after(value: &str) -> Option<u64> {
    value.trim().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_wins_doubling_otherwise_and_both_are_capped() {
        let cases: &[(u64, u32, Option<u64>, u64)] = &[
            (500, 1, None, 500),
            (500, 2, None, 1_000),
            (500, 3, None, 2_000),
            (500, 7, None, 30_000),
            (500, 200, None, 30_000),
            (500, 1, Some(2), 2_000),
            (500, 3, Some(0), 0),
            (500, 1, Some(3600), 30_000),
            (u64::MAX, 2, None, 30_000),
        ];
        for &(base, attempt, after, want) in cases {
            assert_eq!(
                backoff_ms(base, attempt, after),
                want,
                "base {base}, attempt {attempt}, retry-after {after:?}"
            );
        }
        assert_eq!(parse_retry_after(" 7 "), Some(7));
        assert_eq!(parse_retry_after("Wed, 21 Oct 2026 07:28:00 GMT"), None);
    }
}
