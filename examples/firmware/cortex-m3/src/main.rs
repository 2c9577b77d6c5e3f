//! tinyonnx test firmware for a Cortex-M3 without FPU (QEMU `lm3s6965evb`): runs one example model
//! and reports over semihosting; exits 0 when the model ran.

#![no_std]
#![no_main]

use tinyonnx::Model;

include!(concat!(env!("OUT_DIR"), "/model.rs"));

/// Flash and RAM of the board (memory-m3.x).
const FLASH: usize = 256 << 10;
const RAM: usize = 64 << 10;
/// What this firmware keeps for its code and for the stack.
const CODE: usize = 32 << 10;
const STACK: usize = 8 << 10;

include!("../../common/board.rs");
include!("../../common/arm.rs");
