//! `#[wave::kernel]`: marks a function as a WAVE kernel for `wave compile`; to rustc it is the
//! function unchanged (the attribute's arguments, if any, are read by wave's own frontend).

extern crate proc_macro;

use proc_macro::TokenStream;

#[proc_macro_attribute]
pub fn kernel(_options: TokenStream, item: TokenStream) -> TokenStream {
    item
}
