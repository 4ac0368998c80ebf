# baton_add_test(NAME tst_foo SOURCES ... LIBS ... LABELS unit|golden|gui|slow|gpu [TIMEOUT s]
#                [TORCH_FREE])
# TORCH_FREE: the suite does not link LibTorch (the sanitizer build runs it).
# One Qt Test executable per unit; every test runs offscreen, in test mode, with the
# shared data folder passed in and a HOME of its own in the build tree (never the
# user's profile).
function(baton_add_test)
  cmake_parse_arguments(T "TORCH_FREE" "NAME;TIMEOUT" "SOURCES;LIBS;LABELS" ${ARGN})
  add_executable(${T_NAME} ${T_SOURCES})
  target_link_libraries(${T_NAME} PRIVATE Qt6::Test Qt6::Core ${T_LIBS})
  target_include_directories(${T_NAME} PRIVATE ${CMAKE_SOURCE_DIR}/tests/support)
  target_compile_definitions(${T_NAME} PRIVATE
    BATON_SHARED_DIR="${BATON_SHARED_DIR}"
    BATON_SOURCE_DIR="${CMAKE_SOURCE_DIR}")
  if(T_TORCH_FREE)
    target_compile_definitions(${T_NAME} PRIVATE BATON_TEST_TORCH_FREE)
  endif()
  if(NOT BATON_TORCH_FREE)
    target_compile_definitions(${T_NAME} PRIVATE BATON_CLI_PATH="$<TARGET_FILE:baton-cli>")
  endif()
  set_target_properties(${T_NAME} PROPERTIES AUTOMOC ON)
  baton_set_warnings(${T_NAME})
  add_test(NAME ${T_NAME} COMMAND ${T_NAME})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 300)
  endif()
  set(home "${CMAKE_BINARY_DIR}/test-home/${T_NAME}")
  set_tests_properties(${T_NAME} PROPERTIES
    LABELS "${T_LABELS}"
    TIMEOUT ${T_TIMEOUT}
    # OMP_WAIT_POLICY=PASSIVE: LibTorch's OpenMP workers sleep instead of spinning, so a
    # suite does not slow down a hundredfold when another program keeps a core busy
    # (tst_cli sets the policy itself where it tests it). Each suite has a HOME of its
    # own: suites that run at once must not share the app's settings (which story to
    # reopen, the window's geometry).
    ENVIRONMENT "OMP_WAIT_POLICY=PASSIVE;QT_QPA_PLATFORM=offscreen;HOME=${home};XDG_DATA_HOME=${home}/data;XDG_CONFIG_HOME=${home}/config;XDG_CACHE_HOME=${home}/cache")
endfunction()
