# CMake toolchain file: cross-compile vkhlo for aarch64 (arm64) Linux with
# Debian's gcc-aarch64-linux-gnu / g++-aarch64-linux-gnu.
#
#   cmake/aarch64-sysroot.sh build-aarch64-sysroot      # arm64 .debs, unpacked
#   cmake -S . -B build-aarch64 \
#         -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake \
#         -DVKHLO_AARCH64_SYSROOT=$PWD/build-aarch64-sysroot
#
# The sysroot holds the arm64 builds of the packages the library is built
# against (glslang-dev, spirv-tools, libvulkan-dev, libvulkan-volk-dev) and
# the ones it runs against (libvulkan1, mesa-vulkan-drivers); libc and
# libstdc++ come from the cross compiler's own /usr/aarch64-linux-gnu.
# glslangValidator and spirv-val, which check shaders/ at build time, are the
# host's programs (CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)

# The toolchain file is read again inside try_compile projects, where only
# environment variables and CMAKE_TRY_COMPILE_PLATFORM_VARIABLES survive.
if(NOT VKHLO_AARCH64_SYSROOT)
  if(DEFINED ENV{VKHLO_AARCH64_SYSROOT})
    set(VKHLO_AARCH64_SYSROOT $ENV{VKHLO_AARCH64_SYSROOT})
  else()
    get_filename_component(VKHLO_AARCH64_SYSROOT
      "${CMAKE_CURRENT_LIST_DIR}/../build-aarch64-sysroot" ABSOLUTE)
  endif()
endif()
set(VKHLO_AARCH64_SYSROOT "${VKHLO_AARCH64_SYSROOT}" CACHE PATH
    "Unpacked arm64 Debian packages (cmake/aarch64-sysroot.sh)")
set(ENV{VKHLO_AARCH64_SYSROOT} "${VKHLO_AARCH64_SYSROOT}")
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES VKHLO_AARCH64_SYSROOT)

set(CMAKE_FIND_ROOT_PATH "${VKHLO_AARCH64_SYSROOT}")
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
# Debian's glslang and SPIRV-Tools CMake configs name some of their
# libraries bare (-lSPIRV-Tools), which the host linker finds in its default
# directory: the cross linker must be told the sysroot's.
set(CMAKE_EXE_LINKER_FLAGS_INIT "-L${VKHLO_AARCH64_SYSROOT}/usr/lib/aarch64-linux-gnu")
set(CMAKE_SHARED_LINKER_FLAGS_INIT "-L${VKHLO_AARCH64_SYSROOT}/usr/lib/aarch64-linux-gnu")

# Lets ctest and add_custom_command run the target's programs on an x86-64
# host; -L makes qemu's dynamic loader and dlopen look inside the sysroot.
find_program(VKHLO_QEMU_AARCH64 qemu-aarch64)
if(VKHLO_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${VKHLO_QEMU_AARCH64} -L ${VKHLO_AARCH64_SYSROOT})
endif()
