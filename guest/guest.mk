# guest/: rules added by the guest part
