# The test kit's promise: tests of code built on podref need no CAF and no
# internal header. Its own tests (tests/kit/) and the example test
# (examples/testing_example.test.cpp) prove it by including nothing else.
#
#   cmake -DROOT=<source tree> -P kit_public_headers.cmake
#
# Fails listing every include that is not public (file:line: include).
cmake_minimum_required(VERSION 3.21)
file(GLOB sources "${ROOT}/tests/kit/*" "${ROOT}/examples/testing_example.test.cpp")
# What an embedder's test may include: the facades, the vocabulary (but
# not its CAF protocol), the deterministic runtime, Catch2, the standard
# library, and the kit tests' own helpers (which obey the same rule).
set(allowed_regex
  "^(podref/runtime/[a-z_]+\\.hpp|podref/messages/[a-z_0-9]+\\.hpp|podref/testing/deterministic_runtime\\.hpp|podref/manifest/manifest\\.hpp|catch2/catch\\.hpp|kit_steps\\.hpp|support/pod_builders\\.hpp|[a-z_]+)$")
set(violations "")
foreach(src IN LISTS sources)
  file(STRINGS "${src}" lines REGEX "^[ \t]*#[ \t]*include")
  foreach(line IN LISTS lines)
    string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*[<\"]([^>\"]+)[>\"].*" "\\1" inc "${line}")
    if(NOT inc MATCHES "${allowed_regex}" OR inc MATCHES "actor_types")
      string(APPEND violations "\n  ${src}: #include ${inc}")
    endif()
  endforeach()
endforeach()
# The support header the kit tests share must obey the rule too.
set(lines "")
if(EXISTS "${ROOT}/tests/support/pod_builders.hpp")
  file(STRINGS "${ROOT}/tests/support/pod_builders.hpp" lines REGEX "^[ \t]*#[ \t]*include")
endif()
foreach(line IN LISTS lines)
  if(line MATCHES "caf/|actors/|detail/|actor_types")
    string(APPEND violations "\n  tests/support/pod_builders.hpp: ${line}")
  endif()
endforeach()
list(LENGTH sources n)
if(n EQUAL 0)
  message(FATAL_ERROR "kit_public_headers: no kit test found under ${ROOT}")
endif()
if(violations)
  message(FATAL_ERROR "kit tests include what an embedder cannot:${violations}")
endif()
message(STATUS "kit_public_headers: ${n} files include public headers only")
