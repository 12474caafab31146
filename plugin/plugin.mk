# plugin/: rules added by the plugin part
