import stubimp
