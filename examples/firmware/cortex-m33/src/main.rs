//! tinyonnx test firmware for a Cortex-M33 with FPU and DSP (QEMU `mps2-an505`, the core of
//! nRF5340, STM32U5 and RP2350): runs one example model and reports over semihosting;
//! exits 0 when the model ran.

#![no_std]
#![no_main]

use tinyonnx::Model;

include!(concat!(env!("OUT_DIR"), "/model.rs"));

/// Flash and RAM of the board (memory-m33.x).
const FLASH: usize = 4 << 20;
const RAM: usize = 4 << 20;
/// What this firmware keeps for its code and for the stack.
const CODE: usize = 64 << 10;
const STACK: usize = 64 << 10;

include!("../../common/board.rs");
include!("../../common/arm.rs");
