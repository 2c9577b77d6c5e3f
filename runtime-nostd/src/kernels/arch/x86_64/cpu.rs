//! Which x86-64 instruction sets this CPU has: known at compile time in builds with
//! them (`-C target-cpu=native`), otherwise asked once of `cpuid`/`xgetbv` and
//! remembered, the way ONNX Runtime picks its MLAS kernels at run time. Every run-time
//! choice of a kernel variant reads these.

/// Whether this x86-64 CPU has AVX and FMA with the OS saving the AVX registers: known
/// at compile time in builds with those features (`-C target-cpu=native`), otherwise
/// asked once of `cpuid`/`xgetbv` and remembered, the way ONNX Runtime picks its MLAS
/// kernels at run time.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub fn avx_fma() -> bool {
    #[cfg(all(target_feature = "avx", target_feature = "fma"))]
    {
        true
    }
    #[cfg(not(all(target_feature = "avx", target_feature = "fma")))]
    {
        #[cfg(test)]
        if test_switch::capped(1) {
            return false;
        }
        remembered(&AVX_STATE, detect_avx_fma)
    }
}

/// What [`avx_fma`] found: 0 not asked yet, 1 no, 2 yes.
#[cfg(all(
    target_arch = "x86_64",
    not(all(target_feature = "avx", target_feature = "fma"))
))]
static AVX_STATE: core::sync::atomic::AtomicU8 = core::sync::atomic::AtomicU8::new(0);

/// The answer `state` remembers, or `detect`'s, remembered.
#[cfg(target_arch = "x86_64")]
#[allow(dead_code)]
#[inline(always)]
fn remembered(state: &core::sync::atomic::AtomicU8, detect: fn() -> bool) -> bool {
    use core::sync::atomic::Ordering;
    match state.load(Ordering::Relaxed) {
        1 => false,
        2 => true,
        _ => {
            let yes = detect();
            state.store(if yes { 2 } else { 1 }, Ordering::Relaxed);
            yes
        }
    }
}

#[cfg(all(
    target_arch = "x86_64",
    not(all(target_feature = "avx", target_feature = "fma"))
))]
#[cold]
fn detect_avx_fma() -> bool {
    use core::arch::x86_64::__cpuid;
    // CPUID leaf 1, ECX: bit 12 FMA, bit 27 OSXSAVE, bit 28 AVX.
    #[allow(unused_unsafe)]
    // Safety: every x86-64 CPU has CPUID leaf 1.
    let ecx = unsafe { __cpuid(1) }.ecx;
    if ecx & (1 << 12) == 0 || ecx & (1 << 27) == 0 || ecx & (1 << 28) == 0 {
        return false;
    }
    // XCR0 bits 1 and 2: the OS saves SSE and AVX state.
    // Safety: OSXSAVE is set, so XGETBV is available.
    let xcr0 = unsafe { xgetbv0() };
    xcr0 & 0b110 == 0b110
}

/// # Safety
/// The CPU must support XGETBV (CPUID.1:ECX.OSXSAVE).
#[cfg(all(
    target_arch = "x86_64",
    not(all(
        target_feature = "avx",
        target_feature = "fma",
        target_feature = "avx512f"
    ))
))]
#[target_feature(enable = "xsave")]
unsafe fn xgetbv0() -> u64 {
    // Safety: the caller's contract.
    unsafe { core::arch::x86_64::_xgetbv(0) }
}

/// Whether the CPU has AVX-512F (and the OS saves its registers) besides AVX and FMA:
/// known at compile time in builds with it, otherwise asked once of `cpuid`/`xgetbv`
/// and remembered. On CPUs with two 512-bit FMA units it doubles the products' peak.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub fn avx512() -> bool {
    #[cfg(all(target_feature = "avx512f", target_feature = "fma"))]
    {
        true
    }
    #[cfg(not(all(target_feature = "avx512f", target_feature = "fma")))]
    {
        #[cfg(test)]
        if test_switch::capped(2) {
            return false;
        }
        // AVX and FMA as the CPU has them, not as a test may have capped them.
        remembered(&AVX512_STATE, || {
            #[cfg(all(target_feature = "avx", target_feature = "fma"))]
            let avx = true;
            #[cfg(not(all(target_feature = "avx", target_feature = "fma")))]
            let avx = detect_avx_fma();
            avx && detect_avx512()
        })
    }
}

/// What [`avx512`] found: 0 not asked yet, 1 no, 2 yes.
#[cfg(all(
    target_arch = "x86_64",
    not(all(target_feature = "avx512f", target_feature = "fma"))
))]
static AVX512_STATE: core::sync::atomic::AtomicU8 = core::sync::atomic::AtomicU8::new(0);

/// CPUID leaf 7, EBX bit 16 (AVX-512F), and XCR0 bits 5 to 7 (the OS saves the mask
/// and upper ZMM registers); the caller checked AVX (so OSXSAVE).
#[cfg(all(
    target_arch = "x86_64",
    not(all(target_feature = "avx512f", target_feature = "fma"))
))]
#[cold]
fn detect_avx512() -> bool {
    // Safety: the caller checked AVX, which needs OSXSAVE, so XGETBV is available.
    leaf7_ebx() & (1 << 16) != 0 && unsafe { xgetbv0() } & 0b1110_0110 == 0b1110_0110
}

/// Whether the CPU has AVX-512 VNNI (`VPDPBUSD`: four u8 x s8 products summed into each
/// i32 lane) with AVX-512F and BW: asked once of `cpuid` and remembered (a build with
/// the features knows). The 8-bit products run on it where it is there.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub fn vnni() -> bool {
    #[cfg(all(
        target_feature = "avx512f",
        target_feature = "avx512bw",
        target_feature = "avx512vnni"
    ))]
    {
        true
    }
    #[cfg(not(all(
        target_feature = "avx512f",
        target_feature = "avx512bw",
        target_feature = "avx512vnni"
    )))]
    {
        #[cfg(test)]
        if test_switch::capped(3) {
            return false;
        }
        avx512() && remembered(&VNNI_STATE, detect_vnni)
    }
}

/// What [`vnni`] found: 0 not asked yet, 1 no, 2 yes.
#[cfg(all(
    target_arch = "x86_64",
    not(all(
        target_feature = "avx512f",
        target_feature = "avx512bw",
        target_feature = "avx512vnni"
    ))
))]
static VNNI_STATE: core::sync::atomic::AtomicU8 = core::sync::atomic::AtomicU8::new(0);

/// CPUID leaf 7: EBX bit 30 (AVX-512BW), ECX bit 11 (AVX-512 VNNI); the caller checked
/// AVX-512F and that the OS saves its registers.
#[cfg(all(
    target_arch = "x86_64",
    not(all(
        target_feature = "avx512f",
        target_feature = "avx512bw",
        target_feature = "avx512vnni"
    ))
))]
#[cold]
fn detect_vnni() -> bool {
    use core::arch::x86_64::__cpuid_count;
    #[allow(unused_unsafe)]
    // Safety: leaf 7 exists (AVX-512F, which the caller checked, is reported there).
    let r = unsafe { __cpuid_count(7, 0) };
    r.ebx & (1 << 30) != 0 && r.ecx & (1 << 11) != 0
}

/// Whether the CPU has AVX2 (256-bit integer vectors) besides AVX and FMA: known at
/// compile time in builds with it, otherwise asked once of `cpuid` and remembered. The
/// 8-bit products run on it where VNNI is missing (the test switch's level 1).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub fn avx2() -> bool {
    #[cfg(all(target_feature = "avx2", target_feature = "fma"))]
    {
        true
    }
    #[cfg(not(all(target_feature = "avx2", target_feature = "fma")))]
    {
        #[cfg(test)]
        if test_switch::capped(1) {
            return false;
        }
        avx_fma() && remembered(&AVX2_STATE, detect_avx2)
    }
}

/// What [`avx2`] found: 0 not asked yet, 1 no, 2 yes.
#[cfg(all(
    target_arch = "x86_64",
    not(all(target_feature = "avx2", target_feature = "fma"))
))]
static AVX2_STATE: core::sync::atomic::AtomicU8 = core::sync::atomic::AtomicU8::new(0);

/// CPUID leaf 7, EBX bit 5 (AVX2); the caller checked AVX and that the OS saves its
/// registers.
#[cfg(all(
    target_arch = "x86_64",
    not(all(target_feature = "avx2", target_feature = "fma"))
))]
#[cold]
fn detect_avx2() -> bool {
    leaf7_ebx() & (1 << 5) != 0
}

/// CPUID leaf 7's EBX (structured extended features), 0 on a CPU without that leaf.
#[cfg(target_arch = "x86_64")]
#[allow(dead_code)]
fn leaf7_ebx() -> u32 {
    use core::arch::x86_64::{__cpuid, __cpuid_count};
    #[allow(unused_unsafe)]
    // Safety: every x86-64 CPU has CPUID leaf 0, which gives the highest leaf.
    let max = unsafe { __cpuid(0) }.eax;
    if max < 7 {
        return 0;
    }
    #[allow(unused_unsafe)]
    // Safety: leaf 7 exists (checked above).
    unsafe { __cpuid_count(7, 0) }.ebx
}

/// The test switch of [`avx_fma`], [`avx2`], [`avx512`] and [`vnni`]: the highest instruction-set
/// level (0 portable, 1 AVX and FMA (and AVX2), 2 AVX-512, 3 AVX-512 VNNI) the run-time choices may take on this
/// thread, so that tests running meanwhile in other threads keep their paths. Levels a
/// build compiles in cannot be switched off.
#[cfg(all(test, target_arch = "x86_64"))]
#[allow(dead_code)]
mod test_switch {
    extern crate std;
    std::thread_local! {
        static CAP: core::cell::Cell<u8> = const { core::cell::Cell::new(u8::MAX) };
    }

    /// Whether level `level` is switched off on this thread.
    pub fn capped(level: u8) -> bool {
        CAP.with(|c| c.get() < level)
    }

    /// Runs `f` with the levels above `cap` switched off on this thread.
    pub fn with_cap(cap: u8, f: impl FnOnce()) {
        let before = CAP.with(|c| c.replace(cap));
        f();
        CAP.with(|c| c.set(before));
    }
}

#[cfg(test)]
pub use test_switch::with_cap;
