//! A tinyonnx model on an ESP32-C3: classifies one 8x8 image with the scikit-learn digits
//! model (`tinyonnx_examples::Digits`) and prints the class and the time the forward pass
//! took, in microseconds and in CPU cycles at the 160 MHz clock set here. `cargo run
//! --release` flashes the board with espflash. Replace `Digits` with your own model.

#![no_std]
#![no_main]

use esp_hal::clock::CpuClock;
use esp_hal::time::Instant;
use esp_println::println;
use tinyonnx_examples::Digits;

esp_bootloader_esp_idf::esp_app_desc!();

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

/// The CPU clock this firmware sets.
const CPU_MHZ: u64 = 160;

// Fails to build if the model outgrows the part (4 MiB of flash, 400 KiB of SRAM, less
// this firmware's own).
const _: () = tinyonnx::assert_fits(&Digits::INFO, 3 << 20, 320 << 10);

#[panic_handler]
fn panic(info: &core::panic::PanicInfo) -> ! {
    println!("panic: {info}");
    loop {
        core::hint::spin_loop();
    }
}

#[esp_hal::main]
fn main() -> ! {
    let _peripherals = esp_hal::init(esp_hal::Config::default().with_cpu_clock(CpuClock::_160MHz));

    // The model was trained on intensities scaled to 0..=1.
    let x: [f32; 64] = core::array::from_fn(|i| f32::from(SEVEN[i]) / 16.0);
    // The activations (168 bytes here) on the stack; for a larger model put the arena in
    // a `static` (README, "Running on a microcontroller"). The weights are in flash.
    let mut arena = Digits::arena();

    let start = Instant::now();
    let probs: [f32; 10] = Digits::forward(&mut arena, &x);
    let us = start.elapsed().as_micros();

    let class = (0..10).fold(0, |best, k| if probs[k] > probs[best] { k } else { best });
    println!(
        "class {} (p = {}), {} us, about {} cycles",
        class,
        probs[class],
        us,
        us * CPU_MHZ
    );
    loop {
        core::hint::spin_loop();
    }
}
