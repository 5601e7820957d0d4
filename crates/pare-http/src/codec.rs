//! `Content-Encoding`: an upstream's compressed JSON is decoded to be shaped, and the
//! shaped body is encoded again in the coding the client prefers among those it accepts.
//!
//! Decoding is capped: a body that would decode to more than the cap (a compression bomb)
//! is not shaped; it passes untouched. HTTP's `deflate` is the zlib format (RFC 9110); a
//! raw deflate stream, which some servers send instead, is read too.
//!
//! ```
//! use pare_http::codec::{Coding, decode, encode};
//! let packed = encode(Coding::Gzip, b"{\"a\":1}");
//! assert_eq!(decode(Coding::Gzip, &packed, 1 << 20).unwrap().as_ref(), b"{\"a\":1}");
//! assert_eq!(Coding::preferred(Some("gzip;q=0.5, br")), Coding::Br);
//! ```

use std::borrow::Cow;
use std::io::{Read, Write};

/// A content coding pare reads and writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Coding {
    Identity,
    Gzip,
    Deflate,
    Br,
    Zstd,
}

/// Why a body could not be decoded.
#[derive(Debug, thiserror::Error)]
pub enum DecodeError {
    #[error("the body decodes to more than {0} bytes")]
    TooLarge(usize),
    #[error("the body is not valid {coding:?}: {why}")]
    Corrupt { coding: Coding, why: String },
}

impl Coding {
    /// The coding of a `Content-Encoding` value; `None` for one pare does not read (or a
    /// stack of several, `gzip, br`).
    pub fn of(content_encoding: Option<&str>) -> Option<Coding> {
        let Some(v) = content_encoding else {
            return Some(Coding::Identity);
        };
        match v.trim().to_ascii_lowercase().as_str() {
            "" | "identity" => Some(Coding::Identity),
            "gzip" | "x-gzip" => Some(Coding::Gzip),
            "deflate" => Some(Coding::Deflate),
            "br" => Some(Coding::Br),
            "zstd" => Some(Coding::Zstd),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Coding::Identity => "identity",
            Coding::Gzip => "gzip",
            Coding::Deflate => "deflate",
            Coding::Br => "br",
            Coding::Zstd => "zstd",
        }
    }

    /// The coding to send a client whose `Accept-Encoding` is `accept`: the one it ranks
    /// highest (q-values), ties broken zstd, br, gzip, deflate; identity when it accepts
    /// none of them or sends no header.
    pub fn preferred(accept: Option<&str>) -> Coding {
        let Some(accept) = accept else {
            return Coding::Identity;
        };
        let order = PREFERENCE;
        let mut best = (0.0f32, Coding::Identity);
        let mut star: Option<f32> = None;
        let mut listed = Vec::new();
        for part in accept.split(',') {
            let mut bits = part.split(';');
            let name = bits.next().unwrap_or("").trim().to_ascii_lowercase();
            let q = bits
                .filter_map(|p| p.trim().strip_prefix("q="))
                .next()
                .and_then(|q| q.trim().parse::<f32>().ok())
                .unwrap_or(1.0);
            if name == "*" {
                star = Some(q);
                continue;
            }
            listed.push(name.clone());
            if let Some(rank) = order
                .iter()
                .position(|c| c.name() == name || (name == "x-gzip" && *c == Coding::Gzip))
                && better(q, rank, best)
            {
                best = (q, order[rank]);
            }
        }
        if let Some(q) = star
            && let Some(rank) = order
                .iter()
                .position(|c| !listed.iter().any(|l| l == c.name()))
            && better(q, rank, best)
        {
            best = (q, order[rank]);
        }
        best.1
    }
}

/// The codings pare sends, best first (at equal q-values).
const PREFERENCE: [Coding; 4] = [Coding::Zstd, Coding::Br, Coding::Gzip, Coding::Deflate];

/// A higher q wins; at equal q, the earlier in [`PREFERENCE`] (a lower rank).
fn better(q: f32, rank: usize, best: (f32, Coding)) -> bool {
    let best_rank = PREFERENCE
        .iter()
        .position(|c| *c == best.1)
        .unwrap_or(usize::MAX);
    q > best.0 || (q > 0.0 && q == best.0 && rank < best_rank)
}

/// Decode `body`, at most `cap` bytes of output. An identity body is itself (a 52 MB body
/// is not copied to be read).
pub fn decode(coding: Coding, body: &[u8], cap: usize) -> Result<Cow<'_, [u8]>, DecodeError> {
    let corrupt = |why: std::io::Error| DecodeError::Corrupt {
        coding,
        why: why.to_string(),
    };
    let read_capped = |r: &mut dyn Read| -> Result<Cow<'_, [u8]>, DecodeError> {
        let mut out = Vec::new();
        r.take(cap as u64 + 1)
            .read_to_end(&mut out)
            .map_err(corrupt)?;
        if out.len() > cap {
            return Err(DecodeError::TooLarge(cap));
        }
        Ok(Cow::Owned(out))
    };
    match coding {
        Coding::Identity => Ok(Cow::Borrowed(body)),
        Coding::Gzip => read_capped(&mut flate2::read::MultiGzDecoder::new(body)),
        Coding::Deflate => match read_capped(&mut flate2::read::ZlibDecoder::new(body)) {
            Err(DecodeError::Corrupt { .. }) => {
                read_capped(&mut flate2::read::DeflateDecoder::new(body))
            }
            other => other,
        },
        Coding::Br => read_capped(&mut brotli::Decompressor::new(body, 1 << 16)),
        Coding::Zstd => {
            let mut d = zstd::stream::read::Decoder::new(body).map_err(corrupt)?;
            read_capped(&mut d)
        }
    }
}

/// Encode `body` in `coding`. Levels favour speed: a shaped body is small, and its
/// latency is the user's.
pub fn encode(coding: Coding, body: &[u8]) -> Vec<u8> {
    match coding {
        Coding::Identity => body.to_vec(),
        Coding::Gzip => {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::new(5));
            e.write_all(body).expect("writing to memory");
            e.finish().expect("writing to memory")
        }
        Coding::Deflate => {
            let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::new(5));
            e.write_all(body).expect("writing to memory");
            e.finish().expect("writing to memory")
        }
        Coding::Br => {
            let mut out = Vec::new();
            {
                // Dropping the writer ends the stream.
                let mut w = brotli::CompressorWriter::new(&mut out, 1 << 16, 4, 22);
                w.write_all(body).expect("writing to memory");
            }
            out
        }
        Coding::Zstd => zstd::bulk::compress(body, 3).expect("zstd in memory"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_coding_round_trips_and_the_cap_holds() {
        let body = br#"{"rows":[1,2,3],"text":"hello hello hello hello"}"#.repeat(50);
        for c in [
            Coding::Identity,
            Coding::Gzip,
            Coding::Deflate,
            Coding::Br,
            Coding::Zstd,
        ] {
            let packed = encode(c, &body);
            assert_eq!(
                decode(c, &packed, body.len()).unwrap().as_ref(),
                body,
                "{c:?}"
            );
            if c != Coding::Identity {
                assert!(matches!(
                    decode(c, &packed, 100),
                    Err(DecodeError::TooLarge(100))
                ));
            }
        }
        let raw = {
            let mut e = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::fast());
            e.write_all(b"{}").unwrap();
            e.finish().unwrap()
        };
        assert_eq!(decode(Coding::Deflate, &raw, 10).unwrap().as_ref(), b"{}");
        assert!(decode(Coding::Gzip, b"not gzip", 10).is_err());
    }

    #[test]
    fn the_client_s_ranking_picks_the_coding() {
        assert_eq!(Coding::preferred(None), Coding::Identity);
        assert_eq!(
            Coding::preferred(Some("gzip, deflate, br, zstd")),
            Coding::Zstd
        );
        assert_eq!(Coding::preferred(Some("gzip, br;q=0.9")), Coding::Gzip);
        assert_eq!(Coding::preferred(Some("identity")), Coding::Identity);
        assert_eq!(
            Coding::preferred(Some("br;q=0, gzip;q=0")),
            Coding::Identity
        );
        assert_eq!(Coding::preferred(Some("*;q=0.5, zstd;q=0")), Coding::Br);
        assert_eq!(Coding::of(Some("GZIP")), Some(Coding::Gzip));
        assert_eq!(Coding::of(Some("gzip, br")), None);
    }
}
