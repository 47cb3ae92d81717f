# SPDX-License-Identifier: BSD-2-Clause
# EbbVersion.cmake: the version lives in one place, include/ebb/ebb.h.
#
# The header is what a consumer compiles against and what
# ebb_version_number() reports, so CMake reads the version from it instead of
# repeating it (a second copy would drift). Included before project(), so it
# only uses commands that work without a language enabled.

function(ebb_read_header_version header out_var)
    file(STRINGS "${header}" version_lines
         REGEX "^#define EBB_VERSION_(MAJOR|MINOR|PATCH) +[0-9]+")
    foreach(part MAJOR MINOR PATCH)
        set(value "")
        foreach(line IN LISTS version_lines)
            if(line MATCHES "^#define EBB_VERSION_${part} +([0-9]+)")
                set(value "${CMAKE_MATCH_1}")
            endif()
        endforeach()
        if(value STREQUAL "")
            message(FATAL_ERROR "EBB_VERSION_${part} not found in ${header}")
        endif()
        list(APPEND parts "${value}")
    endforeach()
    list(JOIN parts "." version)
    set(${out_var} "${version}" PARENT_SCOPE)
endfunction()
