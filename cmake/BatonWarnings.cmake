# Warnings for Baton's own targets (torch and Qt headers come in as -isystem).
function(baton_set_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wno-unused-parameter)
endfunction()
