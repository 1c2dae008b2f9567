#pragma once
// Internal: WZ_HOT_CLONES marks a coder's hot entry points to be cloned per target: AVX2 and BMI2's
// flag-free shifts pay in bit-stream loops, the default clone runs on any x86-64. Templates are
// inlined whole into those entry points (clang refuses target_clones on templates themselves).
#if defined(WIREZIP_NO_TARGET_CLONES)
// The sanitizer build compiles the hot loops once, for the baseline: the x86 tests then run the
// code the default clone holds, which no AVX2 machine would otherwise reach (the Release build
// runs the AVX2 clones).
#define WZ_HOT_CLONES
#elif defined(__x86_64__) && (defined(__clang__) || __GNUC__ >= 12)
#define WZ_HOT_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#elif defined(__x86_64__)
// GCC 11 (Ubuntu 22.04, the DPU images' compiler) has no dispatcher for arch=x86-64-v3 clones:
// an AVX2 clone there, without BMI2's shifts.
#define WZ_HOT_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define WZ_HOT_CLONES
#endif
