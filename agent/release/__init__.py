"""The release-risk detective: assess a release summary, file a risk report, alert on high risk."""
