//! tinyonnx test firmware for an ESP32-C3-class RISC-V core (riscv32imc, QEMU `virt`):
//! runs one example model and reports over semihosting; exits 0 when the model ran.

#![no_std]
#![no_main]

use tinyonnx::Model;

include!(concat!(env!("OUT_DIR"), "/model.rs"));

/// Flash and RAM of the board (memory-riscv32.x).
const FLASH: usize = 4 << 20;
const RAM: usize = 400 << 10;
/// What this firmware keeps for its code and for the stack.
const CODE: usize = 64 << 10;
const STACK: usize = 32 << 10;

include!("../../common/board.rs");
include!("../../common/riscv.rs");
