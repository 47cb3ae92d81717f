# SPDX-License-Identifier: BSD-2-Clause
# EbbCompilerOptions.cmake: flags every target of the project is built with.
#
# Applied with add_compile_options/add_link_options from the top-level
# directory, before any add_subdirectory, so the library, the CLI, the
# benchmarks and the tests all meet the same warning bar without each
# CMakeLists.txt having to remember it.

set(EBB_WARNING_FLAGS
    -Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes -Wmissing-prototypes
    -Wformat=2 -Wcast-qual -Wundef)
add_compile_options(${EBB_WARNING_FLAGS})
if(EBB_WERROR)
    add_compile_options(-Werror)
endif()

# Sanitizers go on every object and every link: a sanitized test linked to an
# unsanitized library would miss exactly the bugs we are looking for.
set(EBB_SANITIZER_COMPILE_FLAGS
    -fsanitize=address,undefined -fno-omit-frame-pointer
    -fno-sanitize-recover=all)
set(EBB_SANITIZER_LINK_FLAGS -fsanitize=address,undefined)

if(EBB_SANITIZE)
    add_compile_options(${EBB_SANITIZER_COMPILE_FLAGS})
    add_link_options(${EBB_SANITIZER_LINK_FLAGS})
endif()

# Fuzzing needs clang's libFuzzer. The library is compiled with coverage
# instrumentation (fuzzer-no-link) so the fuzzer sees which decoder branches
# an input reaches; only the fuzz targets link libFuzzer's main
# (tests/fuzz/CMakeLists.txt adds -fsanitize=fuzzer to them).
set(EBB_FUZZ_ENABLED OFF)
if(EBB_FUZZ)
    if(CMAKE_C_COMPILER_ID MATCHES "Clang")
        set(EBB_FUZZ_ENABLED ON)
        add_compile_options(-fsanitize=fuzzer-no-link ${EBB_SANITIZER_COMPILE_FLAGS})
        add_link_options(${EBB_SANITIZER_LINK_FLAGS})
    else()
        message(WARNING "EBB_FUZZ needs clang (libFuzzer); fuzz targets are "
                        "not built with ${CMAKE_C_COMPILER_ID}. "
                        "Configure with -DCMAKE_C_COMPILER=clang.")
    endif()
endif()

# For benchmarks only: code tuned to this machine is not portable.
if(EBB_NATIVE)
    add_compile_options(-O3 -march=native)
endif()
