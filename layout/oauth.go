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

// The names of a pending OAuth login through the server (oauth's
// WebLogins) on the cluster's store, so that a login begun on one replica
// is shown, proven and completed on any:
//
//   - OAuthWebLoginName(id): the login's record, sealed like a token
//     record, and the lock its steps (the proof, the callback) take;
//     "oauth-login/id/{id}";
//   - OAuthWebLoginStateName(stateSum): the login's id under its OAuth
//     state, which the callback brings back; stateSum is the state's
//     SHA-256 in hex, so that the state (good once, the key to a pending
//     login) is never a name in clear on Redis nor in an error naming
//     one; "oauth-login/state/{sum}";
//   - OAuthWebLoginOwnerName(owner, server): the id of the one login
//     handed out for owner and server, and the lock held while it is
//     begun, so that two replicas hand out the same URL;
//     "{owner segment}oauth-login/server/{server}".
func OAuthWebLoginName(id string) string { return "oauth-login/id/" + url.PathEscape(id) }

// OAuthWebLoginStateName: see [OAuthWebLoginName].
func OAuthWebLoginStateName(stateSum string) string {
	return "oauth-login/state/" + url.PathEscape(stateSum)
}

// OAuthWebLoginOwnerName: see [OAuthWebLoginName].
func OAuthWebLoginOwnerName(owner, server string) string {
	return OwnerSegment(owner) + "oauth-login/server/" + url.PathEscape(server)
}

// OAuthWebLoginDoneChannel is the channel of package state's Sessions on
// which the replica a login through the server came back to tells every
// replica (owner, elicitation id), so that each tells its sessions of
// the owner: "oauth-login/done".
func OAuthWebLoginDoneChannel() string { return "oauth-login/done" }

// RequestStateKeyName names, in package state's Values, the key that
// seals the requestState handed to 2026-07-28 clients when [cluster]
// sets no state_key: made once by the first replica, read by the others,
// so that a retry any replica receives opens. "request-state/key".
const RequestStateKeyName = "request-state/key"
