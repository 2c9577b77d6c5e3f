// Included by every binary of the Cortex-M board crates (main.rs and node_sample.rs
// through arm.rs; size.rs, forward.rs and specials.rs directly): the device-specific part of the vector table, one entry per interrupt
// line of the emulated board's NVIC (`IRQS`, from the board's build.rs), each the default
// handler. Without cortex-m-rt's `device` feature the table would have 240 entries on
// v7-M and 480 on v8-M Mainline: up to 1.9 KB of flash no real chip's firmware carries,
// counted as the model's code. A device crate (stm32f4xx-hal's PAC, nrf5340's) brings its
// chip's table the same way.

include!(concat!(env!("OUT_DIR"), "/irqs.rs"));

// Safety: `DefaultHandler` is defined by cortex-m-rt's linker script; only its address goes
// into the table, the core calls it on an interrupt no one enabled.
unsafe extern "C" {
    fn DefaultHandler();
}

// Safety: the firmware's only `__INTERRUPTS` (with `device`, cortex-m-rt defines none); its
// section is the one cortex-m-rt's link.x places right after the exceptions, and its
// entries are handler addresses, the layout the core reads.
#[unsafe(link_section = ".vector_table.interrupts")]
#[unsafe(no_mangle)]
static __INTERRUPTS: [unsafe extern "C" fn(); IRQS] = [DefaultHandler; IRQS];
