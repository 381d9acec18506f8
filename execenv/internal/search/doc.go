// Package search holds the file searches that every execution environment
// shares: the request and result types of grep and glob, the pure-Go walker
// (ripgrep's file selection: hidden files searched, .git skipped,
// .gitignore files honoured), the pure-Go grep and glob over any FS (the
// local disk, or SFTP), and the ripgrep command line and output parser
// that give the same rows when rg is installed. It reads files only
// through the FS it is given.
package search
