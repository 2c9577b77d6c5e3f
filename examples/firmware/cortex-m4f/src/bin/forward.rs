//! `LinearRegression` through its `forward` on the Cortex-M4F (`common/forward.rs`).

#![no_std]
#![no_main]

include!("../../../common/arm.rs");
include!("../../../common/forward.rs");
