//! Stage 1 of the JSON trace scanner (docs/benchmarks.md#the-json-trace-scanner):
//! classifies 64 bytes at a time into bit masks (bit `k` describes byte `k`
//! of the block), the way simd-json's stage 1 does, so that the token walker
//! (`token_walk.rs`) jumps from token to token instead of looking at every byte.
//!
//! Three kernels compute the same masks: AVX2 (two 32-byte halves, the
//! whitespace and structural sets looked up with `vpshufb`), SSE2 (four
//! 16-byte quarters, plain compares; every x86-64 has it) and a portable
//! byte loop (other targets, and the reference the SIMD kernels are tested
//! against). The fastest one the CPU has is picked once at run time.
//!
//! This module knows nothing of JSON grammar; what the masks mean for
//! strings and tokens is derived in `token_walk.rs`. It also holds the SSE2
//! helpers of the direct walk (`direct_walk.rs`: `string_stops16`,
//! `number_shape`), which look at 16 or 32 bytes at any position instead
//! of whole blocks.

/// Masks of one 64-byte block.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct BlockMasks {
    /// `"`
    pub quote: u64,
    /// `\`
    pub backslash: u64,
    /// JSON whitespace: space, `\t`, `\n`, `\r`.
    pub whitespace: u64,
    /// Bytes whose value ORed with 0x20 is `{`, `}`, `:` or `,`: the six
    /// structural characters `{ } [ ] : ,` plus two control bytes (0x1A,
    /// 0x0C), which the walker rejects by their value (one lookup instead of
    /// six compares).
    pub structural: u64,
    /// Bytes below 0x20 (never valid inside a string).
    pub control: u64,
    /// Bytes 0x80 and above (UTF-8 to check).
    pub non_ascii: u64,
}

/// Which stage-1 implementation a scanner uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScanKernel {
    /// No stage 1: the byte-by-byte recursive parser only (the scanner
    /// before the speed-up of docs/benchmarks.md#the-json-trace-scanner;
    /// kept as the fallback for every event the fast walker does not
    /// accept, and as the reference of the tests).
    Reference,
    /// Stage 1 as a portable byte loop.
    Portable,
    /// Stage 1 with SSE2 (x86-64 only).
    Sse2,
    /// Stage 1 with AVX2 (x86-64 CPUs that have it).
    Avx2,
}

impl ScanKernel {
    /// The fastest kernel this CPU runs.
    pub fn best() -> ScanKernel {
        #[cfg(target_arch = "x86_64")]
        {
            if std::is_x86_feature_detected!("avx2") {
                return ScanKernel::Avx2;
            }
            ScanKernel::Sse2
        }
        #[cfg(not(target_arch = "x86_64"))]
        ScanKernel::Portable
    }

    /// Every kernel this CPU runs, slowest first (for benchmarks and tests).
    pub fn available() -> Vec<ScanKernel> {
        let mut all = vec![ScanKernel::Reference, ScanKernel::Portable];
        #[cfg(target_arch = "x86_64")]
        {
            all.push(ScanKernel::Sse2);
            if std::is_x86_feature_detected!("avx2") {
                all.push(ScanKernel::Avx2);
            }
        }
        all
    }

    pub fn name(self) -> &'static str {
        match self {
            ScanKernel::Reference => "reference (byte parser)",
            ScanKernel::Portable => "stage 1 portable",
            ScanKernel::Sse2 => "stage 1 SSE2",
            ScanKernel::Avx2 => "stage 1 AVX2",
        }
    }

    /// The block classifier of this kernel; `None` for the reference, or
    /// when the CPU lacks the instructions (then the portable one is used).
    pub(super) fn classifier(self) -> Option<Classifier> {
        match self {
            ScanKernel::Reference => None,
            ScanKernel::Portable => Some(classify_portable as Classifier),
            #[cfg(target_arch = "x86_64")]
            ScanKernel::Sse2 => Some(classify_sse2 as Classifier),
            #[cfg(target_arch = "x86_64")]
            ScanKernel::Avx2 if std::is_x86_feature_detected!("avx2") => {
                Some(classify_avx2 as Classifier)
            }
            _ => Some(classify_portable as Classifier),
        }
    }
}

pub(super) type Classifier = fn(&[u8; 64]) -> BlockMasks;

/// Class bits of each byte for the portable kernel.
const QUOTE: u8 = 1;
const BACKSLASH: u8 = 2;
const WHITESPACE: u8 = 4;
const STRUCTURAL: u8 = 8;
const CONTROL: u8 = 16;
const NON_ASCII: u8 = 32;

static CLASS: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        let c = i as u8;
        let mut k = 0;
        if c == b'"' {
            k |= QUOTE;
        }
        if c == b'\\' {
            k |= BACKSLASH;
        }
        if matches!(c, b' ' | b'\t' | b'\n' | b'\r') {
            k |= WHITESPACE;
        }
        if c < 0x80 && matches!(c | 0x20, b'{' | b'}' | b':' | b',') {
            k |= STRUCTURAL;
        }
        if c < 0x20 {
            k |= CONTROL;
        }
        if c >= 0x80 {
            k |= NON_ASCII;
        }
        t[i] = k;
        i += 1;
    }
    t
};

/// The reference classification, one byte at a time.
pub(super) fn classify_portable(block: &[u8; 64]) -> BlockMasks {
    let mut m = BlockMasks::default();
    for (k, &c) in block.iter().enumerate() {
        let class = CLASS[c as usize];
        let bit = 1u64 << k;
        let set = |mask: &mut u64, flag: u8| {
            if class & flag != 0 {
                *mask |= bit;
            }
        };
        set(&mut m.quote, QUOTE);
        set(&mut m.backslash, BACKSLASH);
        set(&mut m.whitespace, WHITESPACE);
        set(&mut m.structural, STRUCTURAL);
        set(&mut m.control, CONTROL);
        set(&mut m.non_ascii, NON_ASCII);
    }
    m
}

#[cfg(target_arch = "x86_64")]
fn classify_sse2(block: &[u8; 64]) -> BlockMasks {
    use std::arch::x86_64::*;
    // SAFETY: SSE2 is part of the x86-64 baseline; the loads are unaligned
    // loads of 16 bytes inside the 64-byte array.
    unsafe {
        let quote = _mm_set1_epi8(b'"' as i8);
        let backslash = _mm_set1_epi8(b'\\' as i8);
        let space = _mm_set1_epi8(b' ' as i8);
        let tab = _mm_set1_epi8(b'\t' as i8);
        let lf = _mm_set1_epi8(b'\n' as i8);
        let cr = _mm_set1_epi8(b'\r' as i8);
        let lower = _mm_set1_epi8(0x20);
        let open = _mm_set1_epi8(b'{' as i8);
        let close = _mm_set1_epi8(b'}' as i8);
        let colon = _mm_set1_epi8(b':' as i8);
        let comma = _mm_set1_epi8(b',' as i8);
        let max_control = _mm_set1_epi8(0x1F);
        let mut m = BlockMasks::default();
        for q in 0..4 {
            let v = _mm_loadu_si128(block.as_ptr().add(16 * q) as *const __m128i);
            let bits = |x: __m128i| (_mm_movemask_epi8(x) as u32 as u64) << (16 * q);
            m.quote |= bits(_mm_cmpeq_epi8(v, quote));
            m.backslash |= bits(_mm_cmpeq_epi8(v, backslash));
            m.whitespace |= bits(_mm_or_si128(
                _mm_or_si128(_mm_cmpeq_epi8(v, space), _mm_cmpeq_epi8(v, tab)),
                _mm_or_si128(_mm_cmpeq_epi8(v, lf), _mm_cmpeq_epi8(v, cr)),
            ));
            let y = _mm_or_si128(v, lower);
            m.structural |= bits(_mm_or_si128(
                _mm_or_si128(_mm_cmpeq_epi8(y, open), _mm_cmpeq_epi8(y, close)),
                _mm_or_si128(_mm_cmpeq_epi8(y, colon), _mm_cmpeq_epi8(y, comma)),
            ));
            m.control |= bits(_mm_cmpeq_epi8(_mm_max_epu8(v, max_control), max_control));
            m.non_ascii |= bits(v);
        }
        m
    }
}

#[cfg(target_arch = "x86_64")]
fn classify_avx2(block: &[u8; 64]) -> BlockMasks {
    // SAFETY: only handed out by `ScanKernel::classifier` after
    // `is_x86_feature_detected!("avx2")`.
    unsafe { classify_avx2_inner(block) }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn classify_avx2_inner(block: &[u8; 64]) -> BlockMasks {
    use std::arch::x86_64::*;
    // `vpshufb` looks up the low nibble of each byte (bytes >= 0x80 give 0,
    // which matches no byte >= 0x80): a byte is in the set when the table
    // entry at its low nibble is the byte itself. Whitespace: 0x20 at 0,
    // 0x09, 0x0A, 0x0D at their own nibbles; structural (after | 0x20):
    // `:` 0x3A, `{` 0x7B, `,` 0x2C, `}` 0x7D. Other entries are 0xFF, which
    // no byte below 0x80 equals.
    #[rustfmt::skip]
    let ws_table = _mm256_setr_epi8(
        0x20, -1, -1, -1, -1, -1, -1, -1, -1, 0x09, 0x0A, -1, -1, 0x0D, -1, -1,
        0x20, -1, -1, -1, -1, -1, -1, -1, -1, 0x09, 0x0A, -1, -1, 0x0D, -1, -1,
    );
    #[rustfmt::skip]
    let st_table = _mm256_setr_epi8(
        -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 0x3A, 0x7B, 0x2C, 0x7D, -1, -1,
        -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 0x3A, 0x7B, 0x2C, 0x7D, -1, -1,
    );
    let quote = _mm256_set1_epi8(b'"' as i8);
    let backslash = _mm256_set1_epi8(b'\\' as i8);
    let lower = _mm256_set1_epi8(0x20);
    let max_control = _mm256_set1_epi8(0x1F);
    let mut m = BlockMasks::default();
    for h in 0..2 {
        let v = _mm256_loadu_si256(block.as_ptr().add(32 * h) as *const __m256i);
        let bits = |x: __m256i| (_mm256_movemask_epi8(x) as u32 as u64) << (32 * h);
        m.quote |= bits(_mm256_cmpeq_epi8(v, quote));
        m.backslash |= bits(_mm256_cmpeq_epi8(v, backslash));
        m.whitespace |= bits(_mm256_cmpeq_epi8(_mm256_shuffle_epi8(ws_table, v), v));
        let y = _mm256_or_si256(v, lower);
        m.structural |= bits(_mm256_cmpeq_epi8(_mm256_shuffle_epi8(st_table, y), y));
        m.control |= bits(_mm256_cmpeq_epi8(
            _mm256_max_epu8(v, max_control),
            max_control,
        ));
        m.non_ascii |= bits(v);
    }
    m
}

/// Stops of a string body in 16 bytes, for the direct walk
/// (`direct_walk.rs`, docs/benchmarks.md#the-json-trace-scanner): bit `k`
/// describes byte `k`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct StringStops {
    /// `"`
    pub quote: u32,
    /// `\` and bytes below 0x20: an escape or an invalid byte.
    pub bad: u32,
    /// Bytes 0x80 and above (UTF-8 to check).
    pub non_ascii: u32,
}

/// [`StringStops`] of 16 bytes: SSE2 on x86-64 (part of its baseline, so
/// this inlines into the walker, unlike the AVX2 classifier), a byte loop
/// elsewhere.
#[inline(always)]
pub(super) fn string_stops16(w: &[u8; 16]) -> StringStops {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::*;
        // SAFETY: SSE2 is part of the x86-64 baseline; one unaligned load
        // of the 16-byte array.
        unsafe {
            let v = _mm_loadu_si128(w.as_ptr() as *const __m128i);
            let bits = |x: __m128i| _mm_movemask_epi8(x) as u32;
            let max_control = _mm_set1_epi8(0x1F);
            StringStops {
                quote: bits(_mm_cmpeq_epi8(v, _mm_set1_epi8(b'"' as i8))),
                bad: bits(_mm_or_si128(
                    _mm_cmpeq_epi8(v, _mm_set1_epi8(b'\\' as i8)),
                    _mm_cmpeq_epi8(_mm_max_epu8(v, max_control), max_control),
                )),
                non_ascii: bits(v),
            }
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    string_stops16_portable(w)
}

/// The byte-loop [`string_stops16`] (other targets; the tests' reference).
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
pub(super) fn string_stops16_portable(w: &[u8; 16]) -> StringStops {
    let mut s = StringStops {
        quote: 0,
        bad: 0,
        non_ascii: 0,
    };
    for (k, &c) in w.iter().enumerate() {
        s.quote |= ((c == b'"') as u32) << k;
        s.bad |= ((c == b'\\' || c < 0x20) as u32) << k;
        s.non_ascii |= ((c >= 0x80) as u32) << k;
    }
    s
}

/// The shape of the 32 bytes `w` as a number sees them: bit `k` set when
/// `w[k]` is an ASCII digit, bit `32 + k` when it is `.`. The direct walk
/// (`direct_walk.rs`) reads the lengths of digit runs from it instead of
/// looping over words, and compares it with the last number's shape.
#[inline(always)]
pub(super) fn number_shape(w: &[u8; 32]) -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::*;
        // SAFETY: SSE2 is part of the x86-64 baseline; two unaligned loads
        // inside the 32-byte array. Bytes >= 0x80 are negative in the
        // signed compares, so never digits.
        unsafe {
            let above = _mm_set1_epi8(b'0' as i8 - 1);
            let below = _mm_set1_epi8(b'9' as i8 + 1);
            let dot = _mm_set1_epi8(b'.' as i8);
            let bits = |x: __m128i| _mm_movemask_epi8(x) as u32 as u64;
            let shape = |x: __m128i| {
                bits(_mm_and_si128(
                    _mm_cmpgt_epi8(x, above),
                    _mm_cmplt_epi8(x, below),
                )) | bits(_mm_cmpeq_epi8(x, dot)) << 32
            };
            let lo = _mm_loadu_si128(w.as_ptr() as *const __m128i);
            let hi = _mm_loadu_si128(w.as_ptr().add(16) as *const __m128i);
            shape(lo) | shape(hi) << 16
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    number_shape_portable(w)
}

/// The byte-loop [`number_shape`] (other targets; the tests' reference).
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
pub(super) fn number_shape_portable(w: &[u8; 32]) -> u64 {
    w.iter().enumerate().fold(0, |m, (k, &c)| {
        m | (c.is_ascii_digit() as u64) << k | ((c == b'.') as u64) << (32 + k)
    })
}

/// Bit `k` set when `w[k]` is a JSON blank (space, tab, newline, carriage
/// return): the direct walk skips the line breaks and indentation between
/// members that Kineto writes (docs/benchmarks.md#kineto). SSE2 on x86-64,
/// a byte loop elsewhere.
#[inline(always)]
pub(super) fn blanks16(w: &[u8; 16]) -> u32 {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::*;
        // SAFETY: SSE2 is part of the x86-64 baseline; one unaligned load
        // of the 16-byte array.
        unsafe {
            let v = _mm_loadu_si128(w.as_ptr() as *const __m128i);
            let is = |c: u8| _mm_cmpeq_epi8(v, _mm_set1_epi8(c as i8));
            let any = _mm_or_si128(
                _mm_or_si128(is(b' '), is(b'\n')),
                _mm_or_si128(is(b'\t'), is(b'\r')),
            );
            _mm_movemask_epi8(any) as u32
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    blanks16_portable(w)
}

/// The byte-loop [`blanks16`] (other targets; the tests' reference).
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
pub(super) fn blanks16_portable(w: &[u8; 16]) -> u32 {
    w.iter().enumerate().fold(0, |m, (k, &c)| {
        m | (matches!(c, b' ' | b'\n' | b'\t' | b'\r') as u32) << k
    })
}

/// Bit `k` of the result is the XOR of bits `0..=k` of `x`: over the quote
/// mask, 1 from an opening quote up to (not including) its closing quote.
#[inline(always)]
pub(super) fn prefix_xor(mut x: u64) -> u64 {
    x ^= x << 1;
    x ^= x << 2;
    x ^= x << 4;
    x ^= x << 8;
    x ^= x << 16;
    x ^= x << 32;
    x
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every kernel gives the portable kernel's masks for every byte value
    /// at every position of a block, over several backgrounds.
    #[test]
    fn kernels_agree_with_the_portable_classifier() {
        let kernels: Vec<Classifier> = ScanKernel::available()
            .into_iter()
            .filter_map(ScanKernel::classifier)
            .collect();
        for background in [b'a', b' ', 0xC3, b'"', 0x00, 0xFF] {
            for at in 0..64 {
                for byte in 0..=255u8 {
                    let mut block = [background; 64];
                    block[at] = byte;
                    let want = classify_portable(&block);
                    for k in &kernels {
                        assert_eq!(k(&block), want, "byte {byte:#x} at {at} on {background:#x}");
                    }
                }
            }
        }
    }

    /// The direct walk's SSE2 helpers give their byte loops' masks for
    /// every byte value at every position, over several backgrounds.
    #[test]
    fn window_helpers_agree_with_byte_loops() {
        for background in [b'a', b'1', b'.', b'"', 0x00, 0xFF, b' ', b'\n'] {
            for at in 0..32 {
                for byte in 0..=255u8 {
                    let mut w = [background; 32];
                    w[at] = byte;
                    assert_eq!(
                        number_shape(&w),
                        number_shape_portable(&w),
                        "{byte:#x} at {at}"
                    );
                    if at < 16 {
                        let w: &[u8; 16] = w[..16].try_into().expect("16 bytes");
                        assert_eq!(string_stops16(w), string_stops16_portable(w));
                        assert_eq!(blanks16(w), blanks16_portable(w));
                    }
                }
            }
        }
    }

    #[test]
    fn portable_classes() {
        let mut block = [b'x'; 64];
        block[..12].copy_from_slice(b"{\"a\": [1]}\t\\");
        block[63] = 0xE9;
        block[62] = 0x1A;
        let m = classify_portable(&block);
        // `{"a": [1]}` then a tab and a backslash: quotes at 1 and 3.
        assert_eq!(m.quote, 0b1010);
        assert_eq!(m.backslash, 1 << 11);
        assert_eq!(m.whitespace, (1 << 5) | (1 << 10));
        assert_eq!(
            m.structural,
            1 | (1 << 4) | (1 << 6) | (1 << 8) | (1 << 9) | (1 << 62)
        );
        assert_eq!(m.control, (1 << 10) | (1 << 62));
        assert_eq!(m.non_ascii, 1 << 63);
    }

    #[test]
    fn prefix_xor_marks_string_interiors() {
        assert_eq!(prefix_xor(0b1001), 0b0111);
        assert_eq!(prefix_xor(1 << 63), 1 << 63);
        assert_eq!(prefix_xor(0b11), 0b01);
    }
}
