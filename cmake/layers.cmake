# The layers, kept by the build. Each library sees only its own headers and
# those of the libraries it declares it depends on (and theirs, down to
# core): a view folder of links to exactly those headers is its include path,
# so an include that runs up the layers (or sideways, to a library it did not
# declare) fails to compile with "No such file or directory". The layers are
# drawn in docs/architecture.md; scripts/build_rules.sh checks the refusal.
#
#   causeway_layer(TARGET HEADERS <globs> DEPENDS <causeway libraries>)
#
# HEADERS: the library's own headers, as globs relative to the repository
# (src/spec/*.h, include/causeway/estate.h). DEPENDS: the libraries below it
# that it uses, linked PUBLIC; each must have been declared before it.
function(causeway_layer target)
  cmake_parse_arguments(L "" "" "HEADERS;DEPENDS" ${ARGN})
  set(own)
  foreach(glob IN LISTS L_HEADERS)
    file(GLOB_RECURSE found CONFIGURE_DEPENDS RELATIVE ${CMAKE_SOURCE_DIR} ${CMAKE_SOURCE_DIR}/${glob})
    list(APPEND own ${found})
  endforeach()
  set(seen ${own})
  foreach(dep IN LISTS L_DEPENDS)
    get_property(declared GLOBAL PROPERTY CAUSEWAY_LAYER_${dep} SET)
    if(NOT declared)
      message(FATAL_ERROR "causeway_layer(${target}): ${dep} is not a layer declared before it")
    endif()
    get_property(theirs GLOBAL PROPERTY CAUSEWAY_LAYER_${dep})
    list(APPEND seen ${theirs})
  endforeach()
  list(REMOVE_DUPLICATES seen)
  set_property(GLOBAL PROPERTY CAUSEWAY_LAYER_${target} "${seen}")

  set(view ${CMAKE_BINARY_DIR}/layers/${target})
  file(REMOVE_RECURSE ${view})
  foreach(header IN LISTS seen)
    string(REGEX REPLACE "^(src|include)/" "" path ${header})
    get_filename_component(dir ${view}/${path} DIRECTORY)
    file(MAKE_DIRECTORY ${dir})
    file(CREATE_LINK ${CMAKE_SOURCE_DIR}/${header} ${view}/${path} SYMBOLIC)
  endforeach()
  get_target_property(type ${target} TYPE)
  if(type STREQUAL "INTERFACE_LIBRARY")
    target_link_libraries(${target} INTERFACE ${L_DEPENDS})
  else()
    target_include_directories(${target} PRIVATE ${view})
    target_link_libraries(${target} PUBLIC ${L_DEPENDS})
  endif()
endfunction()
