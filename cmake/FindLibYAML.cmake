# FindLibYAML.cmake: locate libyaml (Debian: libyaml-dev), the YAML parser
# of podref's manifest decoder.
#
# libyaml ships a pkg-config file (yaml-0.1) but no CMake package; this
# module finds it without pkg-config, so that the installed podref package
# needs nothing more than CMake to find it again.
#
# Result target:    LibYAML::LibYAML (imported)
# Result variables: LibYAML_FOUND, LibYAML_INCLUDE_DIR, LibYAML_LIBRARY,
#                   LibYAML_VERSION (from the pkg-config file when there is
#                   one)

find_path(LibYAML_INCLUDE_DIR NAMES yaml.h)
find_library(LibYAML_LIBRARY NAMES yaml)

set(LibYAML_VERSION "")
find_package(PkgConfig QUIET)
if(PKG_CONFIG_FOUND)
  pkg_check_modules(_libyaml_pc QUIET yaml-0.1)
  if(_libyaml_pc_FOUND)
    set(LibYAML_VERSION "${_libyaml_pc_VERSION}")
  endif()
endif()

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(LibYAML
  REQUIRED_VARS LibYAML_LIBRARY LibYAML_INCLUDE_DIR
  VERSION_VAR LibYAML_VERSION)

if(LibYAML_FOUND AND NOT TARGET LibYAML::LibYAML)
  add_library(LibYAML::LibYAML UNKNOWN IMPORTED)
  set_target_properties(LibYAML::LibYAML PROPERTIES
    IMPORTED_LOCATION "${LibYAML_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${LibYAML_INCLUDE_DIR}")
endif()

mark_as_advanced(LibYAML_INCLUDE_DIR LibYAML_LIBRARY)
