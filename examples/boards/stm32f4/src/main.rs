//! A tinyonnx model on an STM32F411: classifies one 8x8 image with the scikit-learn
//! digits model (`tinyonnx_examples::Digits`) and logs the class and the core cycles the
//! forward pass took (DWT cycle counter). `cargo run --release` flashes the board with
//! probe-rs and prints the defmt log. Replace `Digits` with your own model.

#![no_std]
#![no_main]

use cortex_m::peripheral::DWT;
use cortex_m_rt::entry;
use defmt_rtt as _;
use panic_probe as _;
use stm32f4xx_hal::{pac, prelude::*};
use tinyonnx_examples::Digits;

/// The first image of the digits test split, a 7: intensities 0 to 16, row by row.
const SEVEN: [u8; 64] = [
    0, 0, 2, 13, 16, 9, 0, 0, //
    0, 0, 12, 12, 7, 16, 3, 0, //
    0, 1, 14, 3, 0, 16, 4, 0, //
    0, 0, 0, 4, 10, 16, 6, 0, //
    0, 0, 0, 13, 16, 16, 9, 0, //
    0, 0, 0, 5, 13, 1, 0, 0, //
    0, 0, 0, 11, 9, 0, 0, 0, //
    0, 0, 1, 16, 4, 0, 0, 0, //
];

// Fails to build if the model outgrows the part (flash and RAM less this firmware's own).
const _: () = tinyonnx::assert_fits(&Digits::INFO, 448 << 10, 112 << 10);

#[entry]
fn main() -> ! {
    let dp = pac::Peripherals::take().expect("taken once");
    let mut cp = cortex_m::Peripherals::take().expect("taken once");
    // 100 MHz from the 16 MHz internal oscillator.
    let _clocks = dp.RCC.constrain().cfgr.sysclk(100.MHz()).freeze();
    cp.DCB.enable_trace();
    cp.DWT.enable_cycle_counter();

    // The model was trained on intensities scaled to 0..=1.
    let x: [f32; 64] = core::array::from_fn(|i| f32::from(SEVEN[i]) / 16.0);
    // The activations (168 bytes here) on the stack; for a larger model put the arena in
    // a `static` (README, "Running on a microcontroller"). The weights are in flash.
    let mut arena = Digits::arena();

    let start = DWT::cycle_count();
    let probs: [f32; 10] = Digits::forward(&mut arena, &x);
    let cycles = DWT::cycle_count().wrapping_sub(start);

    let class = (0..10).fold(0, |best, k| if probs[k] > probs[best] { k } else { best });
    defmt::info!("class {} (p = {}), {} cycles", class, probs[class], cycles);
    loop {
        cortex_m::asm::wfi();
    }
}
