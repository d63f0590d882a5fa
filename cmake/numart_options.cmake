# Warning set and sanitizer wiring shared by every numart target.
add_library(numart_warnings INTERFACE)
target_compile_options(numart_warnings INTERFACE -Wall -Wextra -Wpedantic -Wshadow
  -Wnon-virtual-dtor -Wcast-align -Wnull-dereference -Wimplicit-fallthrough)
# g++ 12 reports -Wrestrict false positives inside libstdc++'s std::string concatenation at
# -O2/-O3 (GCC bugs 105329 and 105651, fixed in 13); they point at char_traits.h, not at us.
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
  target_compile_options(numart_warnings INTERFACE -Wno-restrict)
endif()
if(NUMART_WERROR)
  target_compile_options(numart_warnings INTERFACE -Werror)
endif()

if(NUMART_SANITIZER STREQUAL "address")
  add_compile_options(-fsanitize=address -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address)
elseif(NUMART_SANITIZER STREQUAL "address+undefined")
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined -fno-sanitize-recover=all)
elseif(NUMART_SANITIZER STREQUAL "undefined")
  add_compile_options(-fsanitize=undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
  add_link_options(-fsanitize=undefined -fno-sanitize-recover=all)
elseif(NUMART_SANITIZER STREQUAL "thread")
  # RT_TSAN makes sync/ use release/acquire stores instead of standalone fences,
  # which TSan cannot see (docs/design/deque.md I-DEQ-8).
  add_compile_options(-fsanitize=thread -DRT_TSAN=1)
  add_link_options(-fsanitize=thread)
  # The parking protocol's seq_cst fences (I-PARK-1/2) order atomics only; TSan ignores them
  # and g++ warns (-Wtsan). The data they protect is reached through atomics TSan does see.
  include(CheckCXXCompilerFlag)
  check_cxx_compiler_flag(-Wno-tsan NUMART_HAS_WNO_TSAN)
  if(NUMART_HAS_WNO_TSAN)
    add_compile_options(-Wno-tsan)
  endif()
elseif(NUMART_SANITIZER STREQUAL "fuzzer")
  # libFuzzer builds (preset "fuzz", tests/fuzz): every target gets coverage instrumentation and
  # ASan + UBSan; only the harness executables link libFuzzer itself (-fsanitize=fuzzer).
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "NUMART_SANITIZER=fuzzer needs clang (libFuzzer): configure with --preset fuzz")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined -fno-sanitize-recover=all)
elseif(NOT NUMART_SANITIZER STREQUAL "")
  message(FATAL_ERROR "NUMART_SANITIZER='${NUMART_SANITIZER}': expected address, undefined, address+undefined, thread or fuzzer")
endif()

# numart_component(<folder> [SOURCES ...] [DEPS ...]): one target per runtime/ folder.
# Folders with sources are OBJECT libraries folded into libnumart; header-only ones are INTERFACE.
function(numart_component name)
  cmake_parse_arguments(C "" "" "SOURCES;DEPS" ${ARGN})
  set(tgt numart_${name})
  if(C_SOURCES)
    add_library(${tgt} OBJECT ${C_SOURCES})
    target_include_directories(${tgt} PUBLIC
      $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
      $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/runtime>)
    target_link_libraries(${tgt} PUBLIC ${C_DEPS} PRIVATE numart_warnings)
  else()
    add_library(${tgt} INTERFACE)
    target_include_directories(${tgt} INTERFACE
      $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
      $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/runtime>)
    target_link_libraries(${tgt} INTERFACE ${C_DEPS})
  endif()
endfunction()
