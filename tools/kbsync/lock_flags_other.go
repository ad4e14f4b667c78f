//go:build !unix

package kbsync

// lockOpenFlags: no FIFOs or blocking opens to guard against here.
const lockOpenFlags = 0
