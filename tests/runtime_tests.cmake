# Tests of the runtime-only library vkhlo_runtime, in both builds (the
# full one and -DVKHLO_RUNTIME_ONLY=ON); included from the top level.
#   runtime_only   nm/readelf proof that libvkhlo_runtime.{so,a} hold and
#                  need no compiler symbol (tests/runtime_only.sh), and the
#                  stripped size of the .so against the 300 KB goal;
#   runtime_smoke  a C program linked with libvkhlo_runtime.so alone.
add_executable(runtime_smoke ${PROJECT_SOURCE_DIR}/tests/runtime_smoke.c)
set_target_properties(runtime_smoke PROPERTIES LINKER_LANGUAGE C)
target_compile_definitions(runtime_smoke PRIVATE VKHLO_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
target_link_libraries(runtime_smoke PRIVATE vkhlo_runtime_shared ${CMAKE_DL_LIBS})
add_test(NAME runtime_smoke COMMAND runtime_smoke)

set(VKHLO_RUNTIME_ONLY_ARGS $<TARGET_FILE:vkhlo_runtime_shared> $<TARGET_FILE:vkhlo_runtime>)
if(TARGET vkhlo)
  # the compiler's own archive: the check must find its symbols there
  list(APPEND VKHLO_RUNTIME_ONLY_ARGS $<TARGET_FILE:vkhlo>)
endif()
add_test(NAME runtime_only COMMAND ${PROJECT_SOURCE_DIR}/tests/runtime_only.sh ${VKHLO_RUNTIME_ONLY_ARGS})
# The size goal holds for optimized, uninstrumented builds; others report it.
set(VKHLO_RUNTIME_MAX_BYTES 307200)
if(VKHLO_SANITIZE OR NOT CMAKE_BUILD_TYPE MATCHES "^(Release|RelWithDebInfo|MinSizeRel)$")
  set(VKHLO_RUNTIME_MAX_BYTES none)
endif()
set_tests_properties(runtime_smoke PROPERTIES LABELS "unit;runtime"
  ENVIRONMENT "VKHLO_CHECK_BUFFERS=1;VKHLO_VALIDATION=1")
set_tests_properties(runtime_only PROPERTIES LABELS "unit;runtime"
  ENVIRONMENT "VKHLO_RUNTIME_MAX_BYTES=${VKHLO_RUNTIME_MAX_BYTES}")
