//! Where the checker's rules report. It only collects: a rule that finds a mistake
//! reports it and returns what it can (`None`, a poisoned name), and checking goes on,
//! so one compile shows every independent error, each at its token.

use proc_macro2::Span;

/// The errors found so far, in the order found.
#[derive(Default)]
pub(crate) struct Sink {
    errors: Vec<syn::Error>,
    /// Put before every message while set: what an imported file's error is about
    /// (its node), since all of them point at the path.
    pub(crate) context: Option<String>,
}

impl Sink {
    /// Reports `msg` at `span`.
    pub(crate) fn error(&mut self, span: Span, msg: impl std::fmt::Display) {
        let msg = match &self.context {
            Some(c) => format!("{c}: {msg}"),
            None => msg.to_string(),
        };
        self.errors.push(syn::Error::new(span, msg));
    }

    /// Reports an error built elsewhere (by the parser of a literal, an operator's rule).
    pub(crate) fn push(&mut self, error: syn::Error) {
        match &self.context {
            Some(c) => {
                let mut parts = error.into_iter();
                if let Some(first) = parts.next() {
                    let mut e = syn::Error::new(first.span(), format!("{c}: {first}"));
                    for p in parts {
                        e.combine(syn::Error::new(p.span(), format!("{c}: {p}")));
                    }
                    self.errors.push(e);
                }
            }
            None => self.errors.push(error),
        }
    }

    /// How many errors were reported: a rule compares it before and after a part to
    /// learn whether that part failed.
    pub(crate) fn len(&self) -> usize {
        self.errors.len()
    }

    /// Every error found, or `Ok` when there is none.
    pub(crate) fn finish(self) -> Result<(), Vec<syn::Error>> {
        if self.errors.is_empty() {
            Ok(())
        } else {
            Err(self.errors)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Sink;
    use proc_macro2::Span;

    #[test]
    fn every_error_is_kept_in_order() {
        let mut sink = Sink::default();
        assert_eq!(sink.len(), 0);
        sink.error(Span::call_site(), "first");
        sink.push(syn::Error::new(Span::call_site(), "second"));
        assert_eq!(sink.len(), 2);
        let errors = sink.finish().unwrap_err();
        let messages: Vec<String> = errors.iter().map(ToString::to_string).collect();
        assert_eq!(messages, ["first", "second"]);
        assert!(Sink::default().finish().is_ok());
    }
}
