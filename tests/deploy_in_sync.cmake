# deploy/Dockerfile cannot be built here (no container engine), so it is
# kept correct by construction and this check keeps it so:
#
#   cmake -DROOT=<source tree> [-DDOCKERFILE=<path>] -P deploy_in_sync.cmake
#
# - its build stage installs exactly tools/setup.sh's package list (kubectl,
#   which setup.sh adds only for the tests, aside);
# - every `--preset NAME` it uses is a configure and build preset of
#   CMakePresets.json, the one the README builds with, and the binary it
#   copies is that preset's build/NAME/tools/podref;
# - the image tag it documents (`-t IMAGE`) is the image the manifests in
#   deploy/ run.
# Fails listing every difference. DOCKERFILE (default deploy/Dockerfile)
# lets the negative test point it at a drifted copy.

cmake_minimum_required(VERSION 3.21)
if(NOT DEFINED ROOT)
  message(FATAL_ERROR "usage: cmake -DROOT=<source tree> [-DDOCKERFILE=F] -P deploy_in_sync.cmake")
endif()
get_filename_component(ROOT "${ROOT}" ABSOLUTE)
if(NOT DEFINED DOCKERFILE)
  set(DOCKERFILE "${ROOT}/deploy/Dockerfile")
endif()

set(problems "")
macro(problem text)
  string(APPEND problems "\n  ${text}")
endmacro()

# Words of a shell fragment, without continuations and options.
function(package_words text out)
  string(REGEX REPLACE "#[^\n]*" "" text "${text}")
  string(REGEX REPLACE "[\\\\\n\t ]+" ";" words "${text}")
  set(result "")
  foreach(w IN LISTS words)
    if(w AND NOT w MATCHES "^-")
      list(APPEND result "${w}")
    endif()
  endforeach()
  list(SORT result)
  set(${out} "${result}" PARENT_SCOPE)
endfunction()

file(READ "${ROOT}/tools/setup.sh" setup)
if(NOT setup MATCHES "\npackages=\\(([^)]*)\\)")
  message(FATAL_ERROR "tools/setup.sh: no packages=( ... ) list")
endif()
package_words("${CMAKE_MATCH_1}" setup_packages)

file(READ "${DOCKERFILE}" docker)
if(NOT docker MATCHES "apt-get install -y --no-install-recommends \\\\([^&]*)&&")
  message(FATAL_ERROR "${DOCKERFILE}: no build-stage apt-get install list")
endif()
package_words("${CMAKE_MATCH_1}" docker_packages)

foreach(p IN LISTS setup_packages)
  if(NOT p IN_LIST docker_packages)
    problem("${p}: in tools/setup.sh, not installed by the Dockerfile")
  endif()
endforeach()
foreach(p IN LISTS docker_packages)
  if(NOT p IN_LIST setup_packages)
    problem("${p}: installed by the Dockerfile, not in tools/setup.sh")
  endif()
endforeach()

file(READ "${ROOT}/CMakePresets.json" presets_json)
foreach(section configurePresets buildPresets)
  set(${section} "")
  string(JSON n LENGTH "${presets_json}" ${section})
  math(EXPR last "${n} - 1")
  foreach(i RANGE ${last})
    string(JSON name GET "${presets_json}" ${section} ${i} name)
    list(APPEND ${section} "${name}")
  endforeach()
endforeach()
file(READ "${ROOT}/README.md" readme)
string(REGEX MATCHALL "--preset [A-Za-z0-9_-]+" uses "${docker}")
list(REMOVE_DUPLICATES uses)
if(NOT uses)
  problem("the Dockerfile uses no --preset")
endif()
foreach(use IN LISTS uses)
  string(REPLACE "--preset " "" preset "${use}")
  if(NOT preset IN_LIST configurePresets OR NOT preset IN_LIST buildPresets)
    problem("--preset ${preset}: not a configure and build preset of CMakePresets.json")
  endif()
  if(NOT readme MATCHES "cmake --preset ${preset}")
    problem("--preset ${preset}: not the preset README.md builds with")
  endif()
  if(NOT docker MATCHES "build/${preset}/tools/podref")
    problem("--preset ${preset}: the Dockerfile copies no build/${preset}/tools/podref")
  endif()
endforeach()

if(NOT docker MATCHES "-t ([^ \n]+) \\.")
  problem("the Dockerfile documents no `docker build ... -t IMAGE .`")
else()
  set(tag "${CMAKE_MATCH_1}")
  file(GLOB manifests "${ROOT}/deploy/*.yaml")
  foreach(m IN LISTS manifests)
    file(STRINGS "${m}" images REGEX "^[ \t]*image:")
    foreach(line IN LISTS images)
      string(REGEX REPLACE "^[ \t]*image:[ \t]*" "" image "${line}")
      if(NOT image STREQUAL tag)
        problem("${m}: image ${image}, the Dockerfile builds ${tag}")
      endif()
    endforeach()
  endforeach()
endif()

list(LENGTH setup_packages n)
if(problems)
  message(FATAL_ERROR "deploy/ is out of sync:${problems}")
endif()
message(STATUS "deploy/Dockerfile: ${n} packages and the presets in sync")
