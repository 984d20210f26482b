package layout

import "net/url"

// OAuthSealKeyFile is the file, in the OAuth token store's directory
// (never under memory_dir), holding the key that seals token records
// kept on the cluster's Redis: Redis holds ciphertext, and only a process
// that can read this 0600 file can read a token.
const OAuthSealKeyFile = "cluster-tokens.key"

// OAuthRecordName names, in package state (its Values and Locks, keyed
// through [ClusterKey]), the OAuth token record of
// server for owner ("" the operator) and the lock its refresh holds:
// "{owner segment}oauth/{server}". Server names are escaped like owners,
// so that no name reaches into another's.
func OAuthRecordName(owner, server string) string {
	return OwnerSegment(owner) + "oauth/" + url.PathEscape(server)
}
