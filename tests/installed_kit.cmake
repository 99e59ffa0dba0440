# Installs the build into a scratch prefix, then builds and runs the example
# test as an embedder's project would: find_package(podref), podref::testing.
#
#   cmake -DBUILD=<build tree> -DSOURCE=<source tree> -DSCRATCH=<dir> -P installed_kit.cmake
cmake_minimum_required(VERSION 3.21)
file(REMOVE_RECURSE "${SCRATCH}")
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}")
  endif()
endfunction()
run(${CMAKE_COMMAND} --install "${BUILD}" --prefix "${SCRATCH}/prefix")
run(${CMAKE_COMMAND} -S "${SOURCE}/tests/data/installed_kit" -B "${SCRATCH}/build"
    -G Ninja "-DCMAKE_PREFIX_PATH=${SCRATCH}/prefix"
    "-DEXAMPLE_TEST=${SOURCE}/examples/testing_example.test.cpp")
run(${CMAKE_COMMAND} --build "${SCRATCH}/build")
run("${SCRATCH}/build/kit_consumer")
message(STATUS "installed_kit: the example test builds and passes against the installed podref::testing")
