// Package forge opens pull (merge) requests on a forge's REST API behind
// one small interface, Forge: Find the open request whose head is a
// branch, Open one. Three adapters: Gitea and Forgejo (kind "gitea" or
// "forgejo", API root such as https://forge.example/api/v1), GitHub
// ("github", https://api.github.com) and GitLab ("gitlab",
// https://gitlab.com/api/v4).
//
// Adapters speak each forge's documented REST shape: GitHub with a bearer
// token, its JSON media type and API version header, labels added through
// the labels endpoint; GitLab with PRIVATE-TOKEN, the project
// addressed by its URL-encoded path, labels as a comma-separated string
// and a draft as a "Draft: " title; Gitea with "Authorization: token",
// labels by id (resolved from their names) and a draft as a "WIP: "
// title.
//
// After a request is open, Follower (NewFollower, the same adapters)
// reads what the forge says about it for the dispatcher that follows it:
// its state and conflict, a review's line comments, a failed job's log
// (GitHub Actions, GitLab jobs, a Gitea status whose target URL is on the
// forge) and whether a user may write to the repository.
//
// Errors are *Error values carrying the HTTP status and the forge's own
// message, so a 401 (the token is refused) or a 422 (the request is
// invalid, such as a base branch that does not exist) reads as what the
// forge said.
package forge
