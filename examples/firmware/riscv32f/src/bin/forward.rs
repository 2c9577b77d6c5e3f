//! `LinearRegression` through its `forward` on the riscv32f (`common/forward.rs`).

#![no_std]
#![no_main]

include!("../../../common/riscv.rs");
include!("../../../common/forward.rs");
