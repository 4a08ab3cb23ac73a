//! Content negotiation: `OpenMetrics` when the `Accept` header ranks it at
//! least as high as the classic text, gzip when `Accept-Encoding` allows it.

use super::text::Format;

/// The q-value a header gives the media types matching `want`, the
/// highest when several entries match; `None` when none does.
fn quality(header: &str, want: impl Fn(&str) -> bool) -> Option<f32> {
    let mut best: Option<f32> = None;
    for item in header.split(',') {
        let mut parts = item.split(';');
        let ty = parts.next().unwrap_or("").trim().to_ascii_lowercase();
        if !want(&ty) {
            continue;
        }
        let mut q = 1.0f32;
        for p in parts {
            if let Some(v) = p.trim().strip_prefix("q=") {
                q = v.trim().parse().unwrap_or(0.0);
            }
        }
        best = Some(best.map_or(q, |b| b.max(q)));
    }
    best
}

/// Picks the format for an `Accept` header (absent: classic text).
pub fn format(accept: Option<&str>) -> Format {
    let Some(a) = accept else {
        return Format::Classic;
    };
    let om = quality(a, |t| t == "application/openmetrics-text").unwrap_or(0.0);
    let text = quality(a, |t| t == "text/plain" || t == "text/*" || t == "*/*").unwrap_or(0.0);
    if om > 0.0 && om >= text {
        Format::OpenMetrics
    } else {
        Format::Classic
    }
}

/// Whether an `Accept-Encoding` header allows gzip.
pub fn gzip(accept_encoding: Option<&str>) -> bool {
    accept_encoding
        .and_then(|h| quality(h, |t| t == "gzip" || t == "*"))
        .is_some_and(|q| q > 0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prometheus_gets_openmetrics_and_curl_gets_text() {
        // what Prometheus 2.42 sends
        let prom = "application/openmetrics-text;version=1.0.0,application/openmetrics-text;\
                    version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1";
        assert_eq!(format(Some(prom)), Format::OpenMetrics);
        assert_eq!(format(Some("*/*")), Format::Classic);
        assert_eq!(format(None), Format::Classic);
        assert_eq!(
            format(Some("text/plain;q=0.9, application/openmetrics-text;q=0.5")),
            Format::Classic
        );
        assert_eq!(
            format(Some("application/openmetrics-text;q=0")),
            Format::Classic
        );
    }

    #[test]
    fn gzip_only_when_allowed() {
        assert!(gzip(Some("gzip")));
        assert!(gzip(Some("deflate, gzip;q=0.5")));
        assert!(!gzip(Some("gzip;q=0")));
        assert!(!gzip(Some("identity")));
        assert!(!gzip(None));
    }
}
