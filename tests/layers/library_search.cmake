# cmake -DBINARY=FILE -DWORK_DIR=DIR -P library_search.cmake: fails when
# FILE, started with DIR as its working directory, makes the loader look for
# a library anywhere but an absolute path. A relative or empty RUNPATH entry
# is searched from the working directory: whoever can write a libfmt.so.9
# into the folder corral is started from would run code in it.
execute_process(COMMAND readelf -d "${BINARY}" OUTPUT_VARIABLE dynamic RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "readelf -d ${BINARY} failed (${rc})")
endif()
string(REGEX MATCHALL "\\((RUNPATH|RPATH)\\)[^\n]*\\[[^]\n]*\\]" paths "${dynamic}")
foreach(entry IN LISTS paths)
  string(REGEX REPLACE ".*\\[([^]]*)\\].*" "\\1" search "${entry}")
  # A CMake list of the entries; an empty entry stays an empty element.
  string(REPLACE ":" ";" elements "x${search}x")
  foreach(element IN LISTS elements)
    string(REGEX REPLACE "^x|x$" "" element "${element}")
    if(element STREQUAL "" OR NOT element MATCHES "^(/|\\$ORIGIN)")
      message(FATAL_ERROR "${BINARY}: search path [${search}] has the entry '${element}', "
                          "which the loader resolves against the working directory")
    endif()
  endforeach()
endforeach()

# What the loader actually tried, from a folder of nothing.
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")
execute_process(COMMAND ${CMAKE_COMMAND} -E env LD_DEBUG=libs "${BINARY}" --version
                WORKING_DIRECTORY "${WORK_DIR}" OUTPUT_QUIET ERROR_VARIABLE trace)
string(REGEX MATCHALL "trying file=[^\n]*" tried "${trace}")
if(NOT tried)
  message(FATAL_ERROR "LD_DEBUG=libs printed no 'trying file=' line for ${BINARY}")
endif()
foreach(line IN LISTS tried)
  if(NOT line MATCHES "^trying file=/")
    message(FATAL_ERROR "${BINARY} looked for a library relative to its working directory: ${line}")
  endif()
endforeach()
list(LENGTH tried count)
message(STATUS "${BINARY}: ${count} library lookups, every one absolute")
