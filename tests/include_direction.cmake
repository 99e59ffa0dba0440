# The house's include direction: data flows one way, from the vocabulary up
# to the tools. A file may include its own room and the rooms on lower
# floors only; rooms on one floor do not include each other.
#
#   cmake -DROOT=<source tree> -P include_direction.cmake
#
# Fails listing every include that runs the wrong way (file:line: include).
# Includes are recognised as "podref/<room>/..." and "bench/...";
# tests/, examples/ and the fuzz targets may include anything.

cmake_minimum_required(VERSION 3.21)
if(NOT DEFINED ROOT)
  message(FATAL_ERROR "usage: cmake -DROOT=<source tree> -P include_direction.cmake")
endif()
get_filename_component(ROOT "${ROOT}" ABSOLUTE)

# The floor of each room (also in the README's map of the code).
set(floor_messages 0)
set(floor_read_side 1)
set(floor_manifest 1)
set(floor_actors 2)
set(floor_wire 3)
set(floor_runtime 4)
set(floor_node 5)
set(floor_testing 5)
set(floor_bench 6)
set(floor_tools 7)
set(rooms messages read_side manifest actors wire runtime node testing bench tools)

set(violations "")
set(checked 0)
foreach(room IN LISTS rooms)
  file(GLOB_RECURSE sources "${ROOT}/${room}/*.hpp" "${ROOT}/${room}/*.cpp"
       "${ROOT}/${room}/*.cpp.in")
  foreach(src IN LISTS sources)
    math(EXPR checked "${checked} + 1")
    file(STRINGS "${src}" lines REGEX "^[ \t]*#[ \t]*include[ \t]*\"")
    foreach(line IN LISTS lines)
      if(line MATCHES "\"podref/([a-z_]+)/")
        set(target "${CMAKE_MATCH_1}")
      elseif(line MATCHES "\"bench/")
        set(target bench)
      else()
        continue()
      endif()
      if(NOT DEFINED floor_${target})
        continue() # podref/version.hpp and the like: not a room
      endif()
      if(target STREQUAL room)
        continue()
      endif()
      if(floor_${target} LESS floor_${room})
        continue()
      endif()
      file(RELATIVE_PATH rel "${ROOT}" "${src}")
      string(STRIP "${line}" line)
      list(APPEND violations
           "${rel}: ${line} (${room}/ is on floor ${floor_${room}}, ${target}/ on ${floor_${target}})")
    endforeach()
  endforeach()
endforeach()

if(checked EQUAL 0)
  message(FATAL_ERROR "include direction: no source files under ${ROOT}")
endif()
if(violations)
  list(LENGTH violations n)
  list(JOIN violations "\n  " text)
  message(FATAL_ERROR "include direction: ${n} include(s) run against the flow:\n  ${text}")
endif()
message(STATUS "include direction: ${checked} files, every include runs down or within its room")
