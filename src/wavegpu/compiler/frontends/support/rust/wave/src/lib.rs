//! Declarations of WAVE's kernel builtins, for rustc and editors.
//!
//! Rust kernels are compiled by `wave compile k.rs` (wavegpu's Rust frontend), not by rustc: this
//! crate only declares what a kernel may call, so that `cargo check` / `rustc` type-check the
//! kernels and editors complete and document the builtins. Calling a builtin on the host panics.
//!
//! ```ignore
//! use wave::*;
//!
//! #[wave::kernel]
//! pub fn vector_add(a: &[f32], b: &[f32], out: &mut [f32], n: u32) {
//!     let i = global_id(0);
//!     if i < n {
//!         let i = i as usize;
//!         out[i] = a[i] + b[i];
//!     }
//! }
//! ```
#![allow(non_camel_case_types)]
#![allow(clippy::missing_panics_doc)]

use core::ops::{Add, AddAssign, Div, DivAssign, Mul, MulAssign, Neg, Sub, SubAssign};

/// Marks a kernel (`#[wave::kernel]`, or `#[kernel]` after `use wave::*;`).
pub use wave_macros::kernel;

#[cold]
fn device_only() -> ! {
    panic!("wave builtins run on a WAVE device: compile the kernel with `wave compile` and launch it")
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for i32 {}
    impl Sealed for u32 {}
    impl Sealed for usize {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
    impl Sealed for super::f16 {}
}

// ---- types -------------------------------------------------------------------------------------

/// IEEE binary16, stored and computed in half precision on the device (rounded after each
/// operation). Arrays of it are `&[f16]`; values are made with `f16::from_f32`.
#[derive(Clone, Copy, Debug, Default, PartialEq, PartialOrd)]
pub struct f16(u16);

impl f16 {
    /// The f16 nearest to `x`.
    pub fn from_f32(x: f32) -> f16 {
        let _ = x;
        device_only()
    }
    /// The f16 nearest to `x`.
    pub fn from_f64(x: f64) -> f16 {
        let _ = x;
        device_only()
    }
    /// The same value as f32 (exact).
    pub fn to_f32(self) -> f32 {
        device_only()
    }
    /// The same value as f64 (exact).
    pub fn to_f64(self) -> f64 {
        device_only()
    }
    /// The absolute value.
    pub fn abs(self) -> f16 {
        device_only()
    }
    /// The smaller of two values (the non-NaN one).
    pub fn min(self, other: f16) -> f16 {
        let _ = other;
        device_only()
    }
    /// The larger of two values (the non-NaN one).
    pub fn max(self, other: f16) -> f16 {
        let _ = other;
        device_only()
    }
}

macro_rules! f16_ops {
    ($($tr:ident $f:ident $tra:ident $fa:ident),*) => {$(
        impl $tr for f16 {
            type Output = f16;
            fn $f(self, rhs: f16) -> f16 {
                let _ = rhs;
                device_only()
            }
        }
        impl $tra for f16 {
            fn $fa(&mut self, rhs: f16) {
                let _ = rhs;
                device_only()
            }
        }
    )*};
}
f16_ops!(Add add AddAssign add_assign, Sub sub SubAssign sub_assign, Mul mul MulAssign mul_assign,
         Div div DivAssign div_assign);

impl Neg for f16 {
    type Output = f16;
    fn neg(self) -> f16 {
        device_only()
    }
}

/// The scope of a memory fence.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// The threads of one wave.
    Wave,
    /// The threads of one workgroup (local memory).
    Workgroup,
    /// Every thread of the launch (device memory).
    Device,
}

/// Values wave operations and atomics work on: i32, u32 and f32.
pub trait Value: sealed::Sealed + Copy {}
impl Value for i32 {}
impl Value for u32 {}
impl Value for f32 {}

/// The integers: i32 and u32 (the bitwise atomics and wave operations).
pub trait Int: Value {}
impl Int for i32 {}
impl Int for u32 {}

/// An element index of an atomic: usize, or the u32 of an id.
pub trait Index: sealed::Sealed + Copy {}
impl Index for usize {}
impl Index for u32 {}

/// f32, and f64 for the math that also takes it (sqrt, floor, ceil).
pub trait Float: sealed::Sealed + Copy {}
impl Float for f32 {}
impl Float for f64 {}

/// Numbers that have abs, min and max.
pub trait Number: sealed::Sealed + Copy {}
impl Number for i32 {}
impl Number for u32 {}
impl Number for f32 {}
impl Number for f64 {}
impl Number for f16 {}

// ---- thread, workgroup and wave ids ---------------------------------------------------------------

/// The thread's index within its workgroup along `axis` (0, 1 or 2).
pub fn thread_id(axis: u32) -> u32 {
    let _ = axis;
    device_only()
}
/// The workgroup's index within the grid along `axis`.
pub fn workgroup_id(axis: u32) -> u32 {
    let _ = axis;
    device_only()
}
/// The number of threads of a workgroup along `axis`.
pub fn workgroup_size(axis: u32) -> u32 {
    let _ = axis;
    device_only()
}
/// The number of workgroups of the grid along `axis`.
pub fn grid_size(axis: u32) -> u32 {
    let _ = axis;
    device_only()
}
/// workgroup_id(axis) * workgroup_size(axis) + thread_id(axis).
pub fn global_id(axis: u32) -> u32 {
    let _ = axis;
    device_only()
}
/// grid_size(axis) * workgroup_size(axis): the number of threads along `axis`.
pub fn global_size(axis: u32) -> u32 {
    let _ = axis;
    device_only()
}
/// The thread's lane within its wave.
pub fn lane_id() -> u32 {
    device_only()
}
/// The wave's index within its workgroup.
pub fn wave_id() -> u32 {
    device_only()
}
/// The number of lanes of a wave.
pub fn wave_width() -> u32 {
    device_only()
}

// ---- synchronisation and local memory --------------------------------------------------------------

/// Waits until every thread of the workgroup reaches this barrier (local memory is then visible).
pub fn barrier() {
    device_only()
}
/// Orders this thread's memory accesses within `scope`.
pub fn fence(scope: Scope) {
    let _ = scope;
    device_only()
}
/// A workgroup-shared array of N elements of T in local memory (one per workgroup, uninitialised).
pub fn local_array<T: Copy, const N: usize>() -> &'static mut [T; N] {
    device_only()
}

// ---- atomics: each returns the element's old value --------------------------------------------------

macro_rules! atomics {
    ($bound:ident: $($name:ident),*) => {$(
        #[doc = concat!("`", stringify!($name), "(array, index, value)`: the element's old value.")]
        pub fn $name<T: $bound, I: Index>(array: &[T], index: I, value: T) -> T {
            let _ = (array, index, value);
            device_only()
        }
    )*};
}
atomics!(Value: atomic_add, atomic_exchange);
atomics!(Int: atomic_sub, atomic_min, atomic_max, atomic_and, atomic_or, atomic_xor);

/// Stores `desired` where the element equals `expected`; returns the element's old value.
pub fn atomic_cas<T: Value, I: Index>(array: &[T], index: I, expected: T, desired: T) -> T {
    let _ = (array, index, expected, desired);
    device_only()
}

// ---- wave operations -----------------------------------------------------------------------------

macro_rules! wave1 {
    ($bound:ident: $($name:ident),*) => {$(
        #[doc = concat!("`", stringify!($name), "(x)` over the active lanes of the wave.")]
        pub fn $name<T: $bound>(x: T) -> T {
            let _ = x;
            device_only()
        }
    )*};
}
wave1!(Value: wave_reduce_add, wave_reduce_min, wave_reduce_max);
wave1!(Int: wave_reduce_and, wave_reduce_or, wave_prefix_add);

macro_rules! wave2 {
    ($($name:ident),*) => {$(
        #[doc = concat!("`", stringify!($name), "(x, lane)`: x of another lane of the wave.")]
        pub fn $name<T: Value>(x: T, lane: u32) -> T {
            let _ = (x, lane);
            device_only()
        }
    )*};
}
wave2!(wave_shuffle, wave_shuffle_up, wave_shuffle_down, wave_shuffle_xor, wave_broadcast);

/// The mask of the lanes where `c` holds.
pub fn wave_ballot(c: bool) -> u32 {
    let _ = c;
    device_only()
}
/// Whether `c` holds in any active lane.
pub fn wave_any(c: bool) -> bool {
    let _ = c;
    device_only()
}
/// Whether `c` holds in every active lane.
pub fn wave_all(c: bool) -> bool {
    let _ = c;
    device_only()
}

// ---- math: the functions; the methods (x.sqrt(), x.ln(), a.mul_add(b, c)) are Rust's own ----------

macro_rules! math_f32 {
    ($($name:ident),*) => {$(
        #[doc = concat!("`", stringify!($name), "(x)` of an f32.")]
        pub fn $name(x: f32) -> f32 {
            let _ = x;
            device_only()
        }
    )*};
}
math_f32!(rsqrt, sin, cos, exp, exp2, log, log2);

macro_rules! math_float {
    ($($name:ident),*) => {$(
        #[doc = concat!("`", stringify!($name), "(x)` of an f32 or f64.")]
        pub fn $name<T: Float>(x: T) -> T {
            let _ = x;
            device_only()
        }
    )*};
}
math_float!(sqrt, floor, ceil);

/// a * b + c rounded once.
pub fn fma(a: f32, b: f32, c: f32) -> f32 {
    let _ = (a, b, c);
    device_only()
}
/// The absolute value (of an i32: wrapping, as `i32::wrapping_abs`).
pub fn abs<T: Number>(x: T) -> T {
    let _ = x;
    device_only()
}
/// The smaller of two numbers (of floats: the non-NaN one).
pub fn min<T: Number>(a: T, b: T) -> T {
    let _ = (a, b);
    device_only()
}
/// The larger of two numbers (of floats: the non-NaN one).
pub fn max<T: Number>(a: T, b: T) -> T {
    let _ = (a, b);
    device_only()
}

/// `x.rsqrt()`: 1 / sqrt(x), the one math method Rust's f32 lacks.
pub trait Rsqrt {
    /// 1 / sqrt(self).
    fn rsqrt(self) -> Self;
}
impl Rsqrt for f32 {
    fn rsqrt(self) -> f32 {
        device_only()
    }
}

// ---- the builtins Rust spells as std methods, also as free functions --------------------------------
// (x.powf(y), x.powi(3), x.round(), x.round_ties_even(), x.trunc(), x.clamp(lo, hi), x.signum(),
// x.is_nan(), k.count_ones(), k.leading_zeros(), k.trailing_zeros(), k.pow(3) need nothing here)

/// `x.powf(y)`: x to the power y.
pub fn pow(x: f32, y: f32) -> f32 {
    let _ = (x, y);
    device_only()
}
/// `x.powi(n)`, `k.pow(n)`: x to a constant power n >= 1 (square and multiply).
pub fn powi<T: Number>(x: T, n: i32) -> T {
    let _ = (x, n);
    device_only()
}
/// min(max(x, lo), hi) with the device's min and max (a NaN x gives lo).
pub fn clamp<T: Number>(x: T, lo: T, hi: T) -> T {
    let _ = (x, lo, hi);
    device_only()
}
/// `x.clamp(lo, hi)` of a float: x < lo ? lo : x > hi ? hi : x (a NaN x stays NaN).
pub fn clamp_keep_nan<T: Number>(x: T, lo: T, hi: T) -> T {
    let _ = (x, lo, hi);
    device_only()
}
/// 1, -1, or x itself for a zero or a NaN (`k.signum()` of an integer).
pub fn sign<T: Number>(x: T) -> T {
    let _ = x;
    device_only()
}
/// `x.signum()` of a float: 1.0 or -1.0 with x's sign (zeros included); NaN for NaN.
pub fn signum(x: f32) -> f32 {
    let _ = x;
    device_only()
}
/// `x.is_nan()`.
pub fn isnan<T: Float>(x: T) -> bool {
    let _ = x;
    device_only()
}
/// `x.trunc()`: the integral part (rounded toward zero).
pub fn trunc<T: Float>(x: T) -> T {
    let _ = x;
    device_only()
}
/// `x.round_ties_even()`: the nearest integral value, ties to even.
pub fn round_even<T: Float>(x: T) -> T {
    let _ = x;
    device_only()
}
/// JavaScript's `Math.round(x)`: the nearest integral value, ties toward +infinity.
pub fn round_half_up<T: Float>(x: T) -> T {
    let _ = x;
    device_only()
}
/// `if b < a { b } else { a }` (Python's `min`, C++'s `std::min`: NaN and -0.0 by argument order).
pub fn min_first<T: Number>(a: T, b: T) -> T {
    let _ = (a, b);
    device_only()
}
/// `if a < b { b } else { a }` (Python's `max`, C++'s `std::max`).
pub fn max_first<T: Number>(a: T, b: T) -> T {
    let _ = (a, b);
    device_only()
}
/// `x.round()`: the nearest integral value, ties away from zero.
pub fn round_away<T: Float>(x: T) -> T {
    let _ = x;
    device_only()
}

macro_rules! bitcounts {
    ($($name:ident $doc:literal),*) => {$(
        #[doc = $doc]
        pub fn $name<T: Int>(x: T) -> u32 {
            let _ = x;
            device_only()
        }
    )*};
}
bitcounts!(popcount "`k.count_ones()`: the set bits.", clz "`k.leading_zeros()` (32 for 0).",
           ctz "`k.trailing_zeros()` (32 for 0).");

// ---- loops ----------------------------------------------------------------------------------------

/// `for i in unroll(0..4)`: the loop is unrolled when the kernel is compiled (one copy of the
/// body per trip, `i` a constant in each), so per-thread arrays indexed by `i` stay in registers;
/// its bounds must be constants. On the host it is the range itself.
pub fn unroll<I: Iterator>(range: I) -> I {
    range
}
