"""The data every layer shares: errors, results, the Report and its JSON, file io."""
