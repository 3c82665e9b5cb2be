// Package diskfault makes the writes to an open file fail, for tests of
// what a service does when its disk is full or failing. It is used by
// tests only, and works on Linux only (BreakWrites); elsewhere the package
// is empty.
package diskfault
