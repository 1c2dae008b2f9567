# Cross-compiling for aarch64 Linux (the BlueField-3's Arm cores) on an x86-64 Debian host with
# Debian's cross compiler (package g++-aarch64-linux-gnu). The libraries come from an arm64 sysroot:
# Debian's arm64 packages unpacked into a directory (scripts/cross-test makes one), so nothing of
# the host's own packages changes. The compiler brings its own libc and libstdc++; the sysroot adds
# the dependencies' headers, libraries, CMake configs and pkg-config files.
#
#   cmake -S . -B build-aarch64 -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake \
#         -DWIREZIP_AARCH64_SYSROOT=/path/to/sysroot
#
# Binaries run under qemu-user: CMAKE_CROSSCOMPILING_EMULATOR lets gtest_discover_tests list the
# tests at build time.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)

set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)

# The toolchain file is read again for every try_compile, where only the variables listed here
# are passed on.
if(NOT WIREZIP_AARCH64_SYSROOT)
  set(WIREZIP_AARCH64_SYSROOT "$ENV{WIREZIP_AARCH64_SYSROOT}")
endif()
if(NOT IS_DIRECTORY "${WIREZIP_AARCH64_SYSROOT}/usr/lib/aarch64-linux-gnu")
  message(FATAL_ERROR "aarch64 toolchain: WIREZIP_AARCH64_SYSROOT ('${WIREZIP_AARCH64_SYSROOT}') is not an "
                      "arm64 sysroot; scripts/cross-test aarch64 makes one")
endif()
set(WIREZIP_AARCH64_SYSROOT "${WIREZIP_AARCH64_SYSROOT}" CACHE PATH "arm64 sysroot with the dependencies")
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES WIREZIP_AARCH64_SYSROOT)
set(sysroot "${WIREZIP_AARCH64_SYSROOT}")

# Libraries, headers and CMake packages only from the sysroot; programs (pkg-config) from the host.
set(CMAKE_FIND_ROOT_PATH "${sysroot}")
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# Not --sysroot: that would also move the compiler's own libc and libstdc++, which the sysroot
# lacks. Instead the sysroot's headers come before the compiler's last resort, the host's
# /usr/include, and the linker finds the sysroot's libraries and their dependencies.
foreach(lang C CXX)
  set(CMAKE_${lang}_STANDARD_INCLUDE_DIRECTORIES "${sysroot}/usr/include/aarch64-linux-gnu" "${sysroot}/usr/include")
endforeach()
set(link_dirs "-L${sysroot}/usr/lib/aarch64-linux-gnu -Wl,-rpath-link,${sysroot}/usr/lib/aarch64-linux-gnu")
string(APPEND link_dirs " -Wl,-rpath-link,${sysroot}/lib/aarch64-linux-gnu")
set(CMAKE_EXE_LINKER_FLAGS_INIT "${link_dirs}")
set(CMAKE_SHARED_LINKER_FLAGS_INIT "${link_dirs}")

# pkg-config reads the sysroot's .pc files and prefixes their paths with it.
set(ENV{PKG_CONFIG_LIBDIR} "${sysroot}/usr/lib/aarch64-linux-gnu/pkgconfig:${sysroot}/usr/share/pkgconfig")
set(ENV{PKG_CONFIG_SYSROOT_DIR} "${sysroot}")
set(ENV{PKG_CONFIG_PATH} "")

find_program(WIREZIP_QEMU_AARCH64 qemu-aarch64-static)
if(WIREZIP_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR "${WIREZIP_QEMU_AARCH64};-L;${sysroot}")
endif()
