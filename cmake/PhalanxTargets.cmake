# Helpers shared by every module's CMakeLists.txt.

# Warnings for our own code: -Wall -Wextra and a few more that catch real bugs. Third-party
# headers come from system include directories, so they do not count.
function(phalanx_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wnon-virtual-dtor
                                           -Wimplicit-fallthrough)
  if(PHALANX_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()

# phalanx_library(NAME SOURCES ... DEPS ...): a module library rooted at the repository so that
# includes read "scheduler/model.hpp".
function(phalanx_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS;PRIVATE_DEPS" ${ARGN})
  add_library(${name} STATIC ${ARG_SOURCES})
  target_include_directories(${name} PUBLIC "${PROJECT_SOURCE_DIR}")
  target_link_libraries(${name} PUBLIC ${ARG_DEPS} PRIVATE ${ARG_PRIVATE_DEPS})
  phalanx_warnings(${name})
endfunction()

# phalanx_test(NAME SOURCES ... DEPS ... [LABELS label] [TIMEOUT s] [EXCLUDE pattern]): a GoogleTest
# binary whose cases ctest runs one by one. One label only: gtest_discover_tests (CMake 3.25)
# passes PROPERTIES through layers that split a list, so "a;b" would come out as LABELS a b. EXCLUDE (a gtest filter pattern such as "*Long") leaves
# cases out of this registration, for long variants registered separately with phalanx_long_tests.
function(phalanx_test name)
  cmake_parse_arguments(ARG "" "TIMEOUT;EXCLUDE" "SOURCES;DEPS;LABELS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} GTest::gtest_main GTest::gmock)
  phalanx_warnings(${name})
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 120)
  endif()
  if(NOT ARG_LABELS)
    set(ARG_LABELS unit)
  endif()
  list(LENGTH ARG_LABELS label_count)
  if(label_count GREATER 1)
    message(FATAL_ERROR "phalanx_test(${name}): one label only (see the comment above)")
  endif()
  set(filter "*")
  if(ARG_EXCLUDE)
    set(filter "-${ARG_EXCLUDE}")
  endif()
  gtest_discover_tests(${name} DISCOVERY_MODE PRE_TEST TEST_FILTER "${filter}"
                       WORKING_DIRECTORY "${PROJECT_SOURCE_DIR}"
                       PROPERTIES LABELS "${ARG_LABELS}" TIMEOUT ${ARG_TIMEOUT})
endfunction()

# phalanx_long_tests(NAME PATTERN): registers the cases of test binary NAME matching PATTERN with
# the label `slow` and PHALANX_LONG_TESTS=1 set; `make test` leaves the label out, `make long`
# (and the module targets such as `make storage-long`) run them.
function(phalanx_long_tests name pattern)
  gtest_discover_tests(${name} DISCOVERY_MODE PRE_TEST TEST_FILTER "${pattern}" TEST_SUFFIX ".long"
                       WORKING_DIRECTORY "${PROJECT_SOURCE_DIR}"
                       PROPERTIES LABELS "slow" TIMEOUT 7200 ENVIRONMENT "PHALANX_LONG_TESTS=1")
endfunction()
