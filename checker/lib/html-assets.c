/* The HTML pages' stylesheet and scripts (checker/lib/html/report.css,
 * checker/lib/html/report.js, and report-trace.js for a run with a kernel
 * trace: check's report.html and a campaign's
 * summary.html both draw with them; kept as plain files so they can be read
 * and linted as what they are), embedded at build time by the assembler's
 * .incbin and NUL-terminated. checker/checker.mk makes this object depend
 * on both files. */
__asm__ (".section .rodata\n"
         ".global wtc_html_css\n"
         ".hidden wtc_html_css\n"
         ".type wtc_html_css, @object\n"
         "wtc_html_css:\n"
         ".incbin \"checker/lib/html/report.css\"\n"
         ".byte 0\n"
         ".global wtc_html_js\n"
         ".hidden wtc_html_js\n"
         ".type wtc_html_js, @object\n"
         "wtc_html_js:\n"
         ".incbin \"checker/lib/html/report.js\"\n"
         ".byte 0\n"
         ".global wtc_html_trace_js\n"
         ".hidden wtc_html_trace_js\n"
         ".type wtc_html_trace_js, @object\n"
         "wtc_html_trace_js:\n"
         ".incbin \"checker/lib/html/report-trace.js\"\n"
         ".byte 0\n"
         ".previous\n");
