# The Debian package: `cmake --build build --target package` (or `cd build && cpack`)
# writes baton_VERSION_ARCH.deb with the app, baton-cli, the SentencePiece module,
# the bundled models, a desktop entry and the icon. Library dependencies are
# computed by dpkg-shlibdeps from the installed binaries.
install(FILES ${CMAKE_CURRENT_LIST_DIR}/linux/baton.desktop
        DESTINATION ${CMAKE_INSTALL_DATADIR}/applications)
install(FILES ${CMAKE_CURRENT_LIST_DIR}/linux/baton.svg
        DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/scalable/apps)

set(CPACK_GENERATOR "DEB")
set(CPACK_PACKAGE_NAME "baton")
set(CPACK_PACKAGE_VENDOR "Baton")
set(CPACK_PACKAGE_CONTACT "Baton developers <baton@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Studio for long interactive stories with a recurrent GPT-2")
set(CPACK_PACKAGE_DESCRIPTION
    "Baton writes long stories and text adventures with GPT-2 run on fixed windows that\n"
    "carry a small learned recurrent state from one window to the next. It ships\n"
    "small bundled models, a fine-tune panel, overlap comparisons and baton-cli.")
set(CPACK_PACKAGING_INSTALL_PREFIX "/usr")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION "editors")
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# dpkg-shlibdeps does not see the SentencePiece module's runtime needs through dlopen
# (it does scan the module itself), and the SVG icon needs an SVG loader.
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libsentencepiece0")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "qt6-svg-plugins")
set(CPACK_STRIP_FILES ON)
include(CPack)
