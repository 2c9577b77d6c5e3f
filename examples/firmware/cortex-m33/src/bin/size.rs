//! The smallest firmware that runs the model: no printing, no semihosting, a panic
//! handler that halts. `cargo xtask firmware` reports its flash minus the weights as the
//! code size of the forward pass (with the runtime and the entry point).

#![no_std]
#![no_main]

use cortex_m_rt::entry;

include!("../../../common/size.rs");
include!("../../../common/arm_vectors.rs");
