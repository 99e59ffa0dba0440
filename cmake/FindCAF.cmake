# FindCAF.cmake: locate the C++ Actor Framework 0.17 as Debian packages it.
#
# Debian's libcaf-dev ships headers and shared libraries but no CMake package
# and no pkg-config file, so podref finds it by hand.
#
# Result targets:   CAF::core, CAF::io (imported, shared)
# Result variables: CAF_FOUND, CAF_VERSION, CAF_INCLUDE_DIR,
#                   CAF_CORE_LIBRARY, CAF_IO_LIBRARY
# Components:       core (default), io
#
# Only 0.17.x is accepted: 0.18 changed the actor API that podref is written
# against.

find_package(Threads REQUIRED)

find_path(CAF_INCLUDE_DIR NAMES caf/config.hpp caf/all.hpp)
find_library(CAF_CORE_LIBRARY NAMES caf_core)
find_library(CAF_IO_LIBRARY NAMES caf_io)

set(CAF_VERSION "")
if(CAF_INCLUDE_DIR AND EXISTS "${CAF_INCLUDE_DIR}/caf/config.hpp")
  file(STRINGS "${CAF_INCLUDE_DIR}/caf/config.hpp" _caf_version_line
       REGEX "^#define CAF_VERSION [0-9]+")
  if(_caf_version_line MATCHES "CAF_VERSION ([0-9]+)")
    # CAF encodes major * 10000 + minor * 100 + patch.
    math(EXPR _caf_major "${CMAKE_MATCH_1} / 10000")
    math(EXPR _caf_minor "(${CMAKE_MATCH_1} / 100) % 100")
    math(EXPR _caf_patch "${CMAKE_MATCH_1} % 100")
    set(CAF_VERSION "${_caf_major}.${_caf_minor}.${_caf_patch}")
  endif()
endif()

set(_caf_required_vars CAF_INCLUDE_DIR CAF_CORE_LIBRARY)
if("io" IN_LIST CAF_FIND_COMPONENTS)
  list(APPEND _caf_required_vars CAF_IO_LIBRARY)
endif()
if(CAF_CORE_LIBRARY)
  set(CAF_core_FOUND TRUE)
endif()
if(CAF_IO_LIBRARY)
  set(CAF_io_FOUND TRUE)
endif()

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(CAF
  REQUIRED_VARS ${_caf_required_vars}
  VERSION_VAR CAF_VERSION
  HANDLE_COMPONENTS)

if(CAF_FOUND AND NOT CAF_VERSION MATCHES "^0\\.17\\.")
  set(CAF_FOUND FALSE)
  set(_caf_msg "podref needs CAF 0.17.x, found ${CAF_VERSION} in ${CAF_INCLUDE_DIR}")
  if(CAF_FIND_REQUIRED)
    message(FATAL_ERROR "${_caf_msg}")
  elseif(NOT CAF_FIND_QUIETLY)
    message(WARNING "${_caf_msg}")
  endif()
endif()

if(CAF_FOUND AND NOT TARGET CAF::core)
  add_library(CAF::core SHARED IMPORTED)
  set_target_properties(CAF::core PROPERTIES
    IMPORTED_LOCATION "${CAF_CORE_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${CAF_INCLUDE_DIR}"
    INTERFACE_LINK_LIBRARIES Threads::Threads)
endif()
if(CAF_FOUND AND CAF_IO_LIBRARY AND NOT TARGET CAF::io)
  add_library(CAF::io SHARED IMPORTED)
  set_target_properties(CAF::io PROPERTIES
    IMPORTED_LOCATION "${CAF_IO_LIBRARY}"
    INTERFACE_LINK_LIBRARIES CAF::core)
endif()

mark_as_advanced(CAF_INCLUDE_DIR CAF_CORE_LIBRARY CAF_IO_LIBRARY)
